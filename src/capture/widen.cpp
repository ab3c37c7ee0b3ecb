// Catalog-only widenings; see widen.hpp. The comparison is between the
// stored definition and the same statement validated again against the live
// schema, so every copy whose type PostgreSQL would now give differently is
// found, whatever expression it comes from.
#include "capture/widen.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <regex>

#include "base/event_log.hpp"
#include "bind/validate.hpp"
#include "catalog/lifecycle.hpp"
#include "compile/shared_sql.hpp"
#include "pg/lock_timeout.hpp"
#include "pg/sql_error.hpp"
#include "trellis/error.hpp"

namespace trellis::capture {

namespace {

using catalog::Column;

struct TypeChange {
  std::string column;
  std::string from;
  std::string to;
  Column now;  // the column as it is to be
};

// (name, modifier args) of "character varying(10)" / "numeric(12,2)".
bool split_type(const std::string& type, std::string& base, std::vector<int>& args) {
  static const std::regex re(R"(^([a-z ]+?)(?:\((\d+)(?:,(\d+))?\))?$)");
  std::smatch m;
  if (!std::regex_match(type, m, re)) return false;
  base = m[1];
  args.clear();
  if (m[2].matched) args.push_back(std::stoi(m[2]));
  if (m[3].matched) args.push_back(std::stoi(m[3]));
  return true;
}

// Columns of `after` whose type differs from the same-named column of
// `before` (a column missing from either is not a type change).
void type_changes(const std::vector<Column>& before, const std::vector<Column>& after,
                  std::vector<TypeChange>& out) {
  for (const auto& a : after)
    for (const auto& b : before)
      if (a.name == b.name && a.type != b.type) out.push_back({a.name, b.type, a.type, a});
}

std::vector<Column> field_columns(const catalog::TransformDef& d) {
  std::vector<Column> out;
  for (const auto& f : d.fields) out.push_back(f.column);
  return out;
}

bool any_accumulator_changed(const catalog::TransformDef& a, const catalog::TransformDef& b) {
  if (a.accumulators.size() != b.accumulators.size()) return true;
  for (size_t i = 0; i < a.accumulators.size(); ++i)
    if (a.accumulators[i].arg_type != b.accumulators[i].arg_type ||
        a.accumulators[i].arg_sql != b.accumulators[i].arg_sql)
      return true;
  return false;
}

}  // namespace

bool is_catalog_only_widening(const std::string& from, const std::string& to) {
  std::string fb, tb;
  std::vector<int> fa, ta;
  if (!split_type(from, fb, fa) || !split_type(to, tb, ta)) return false;
  if (fb == "character varying")
    return (tb == "text" ||
            (tb == "character varying" && (ta.empty() || (!fa.empty() && ta[0] >= fa[0]))));
  if (fb == "numeric" && tb == "numeric" && fa.size() == 2)
    return ta.empty() || (ta.size() == 2 && ta[1] == fa[1] && ta[0] >= fa[0]);
  return false;
}

Widened widen_in_place(pg::Connection& conn, catalog::Store& store,
                       const catalog::TransformDef& def, std::string& why) {
  catalog::TransformDef fresh;
  try {
    auto parsed = std::get<lang::TransformStmt>(lang::parse_statement(def.statement));
    fresh = bind::validate_transform(conn, store, parsed, {def.target_schema, true});
  } catch (const Error& e) {
    why = e.what();
    return Widened::not_widening;
  }
  std::vector<TypeChange> keys, fields, ledger;
  type_changes(def.key, fresh.key, keys);
  type_changes(def.group, fresh.group, keys);
  type_changes(field_columns(def), field_columns(fresh), fields);
  type_changes(def.ledger, fresh.ledger, ledger);
  if (!keys.empty()) {
    why = fmt::format("key column \"{}\" changed from {} to {}", keys[0].column, keys[0].from,
                      keys[0].to);
    return Widened::not_widening;
  }
  if (any_accumulator_changed(def, fresh)) {
    why = "an aggregate's argument type changed";
    return Widened::not_widening;
  }
  for (const auto* list : {&fields, &ledger})
    for (const auto& c : *list)
      if (!is_catalog_only_widening(c.from, c.to)) {
        why = fmt::format(
            "\"{}\" would change from {} to {}, which is not a widening PostgreSQL "
            "applies in place",
            c.column, c.from, c.to);
        return Widened::not_widening;
      }
  auto ddl = [](const std::string& schema, const std::string& table,
                const std::vector<TypeChange>& changes) {
    std::vector<Column> cols;
    for (const auto& c : changes) cols.push_back(c.now);
    return compile::alter_column_types(schema, table, cols);
  };
  bool widened = pg::try_under_lock_timeout(conn, [&] {
    if (!fields.empty()) conn.exec(ddl(def.target_schema, def.target_table, fields));
    if (!ledger.empty()) conn.exec(ddl(def.target_schema, def.ledger_table(), ledger));
    // Keys held because a value did not fit the narrower copy fit now: they
    // are let go and the transform is rebuilt in place, which re-derives them.
    catalog::Lifecycle(store).widen(conn, def, fresh);
  });
  if (!widened) return Widened::retry_later;
  base::log_event(spdlog::level::info, "capture_widened", def.target_name(),
                  {{"table", def.source_name()}, {"columns", fields.size() + ledger.size()}},
                  fmt::format("transform {}: widened {} column(s) in place to follow {}",
                              def.target_name(), fields.size() + ledger.size(), def.source_name()));
  return Widened::done;
}

}  // namespace trellis::capture
