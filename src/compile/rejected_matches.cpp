// The matches a WHERE rejects; see rejected_matches.hpp.
#include "compile/rejected_matches.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "compile/one_to_one.hpp"
#include "compile/shared_sql.hpp"

namespace trellis::compile {

using base::ident;
using base::qualified;
using catalog::TransformDef;

std::optional<TransformDef> rejected_matches(const TransformDef& d) {
  if (d.rejecting_joins.empty() || !d.where_sql) return std::nullopt;
  TransformDef r = d;
  r.target_table = d.rejected_table();
  r.shape = catalog::Shape::one_to_one;
  r.fields.clear();
  r.group.clear();
  r.group_exprs.clear();
  r.ledger.clear();
  r.accumulators.clear();
  r.identity.clear();
  r.paused_columns.clear();
  r.rejecting_joins.clear();
  r.feeds_downstream = false;
  // A row the WHERE rejects (false or NULL) where one of the joins matched:
  // a row without their matches has no joined row whose change must find it.
  std::string matched;
  for (const auto& alias : d.rejecting_joins)
    for (const auto& j : d.joins)
      if (j.alias == alias)
        matched += fmt::format("{}{}.{} IS NOT NULL", matched.empty() ? "" : " OR ", ident(j.alias),
                               ident(j.key.front().name));
  r.where_sql = fmt::format("NOT coalesce(({}), false) AND ({})", *d.where_sql, matched);
  return r;
}

HeldRows rejected_held_rows(const TransformDef& rejected) {
  return one_to_one_held_rows(rejected);
}

namespace {

// The keys of d's source that `held` or the table of rejected matches hold.
std::string held_or_rejected(const TransformDef& d, const std::string& held,
                             const std::string& rejected) {
  std::string cols = base::join<catalog::Column>(
      d.key, ", ", [](const catalog::Column& c) { return ident(c.name); });
  return fmt::format("(SELECT {0} FROM {1} UNION SELECT {0} FROM {2})", cols, held, rejected);
}

// `stmt` with `ctes` run in it, in its snapshot: first in its WITH list.
std::string with_ctes(const std::string& ctes, const std::string& stmt) {
  if (stmt.rfind("WITH ", 0) == 0) return "WITH " + ctes + ", " + stmt.substr(5);
  return "WITH " + ctes + " " + stmt;
}

}  // namespace

void add_rejected_matches(const TransformDef& d, const std::string& held, TransformSql& sql) {
  auto rejected = rejected_matches(d);
  if (!rejected) return;
  TransformSql own = compile_transform(*rejected);
  sql.side_create.insert(sql.side_create.end(), own.create.begin(), own.create.end());
  sql.side_drop.insert(sql.side_drop.end(), own.drop.begin(), own.drop.end());
  for (auto& s : own.create) sql.create.push_back(std::move(s));
  for (auto& s : own.drop) sql.drop.push_back(std::move(s));
  for (auto& s : own.analyze) sql.analyze.push_back(std::move(s));
  // Written in the statement that writes the held rows, in its snapshot: a
  // match that statement saw is held there or here, whatever commits
  // between the statements of one transaction.
  auto writes = one_to_one_writes(*rejected, "__trellis_rejected");
  const size_t at = TransformSql::kHeldRowsStep;
  sql.steps.at(at) = with_ctes(writes.page, sql.steps.at(at));
  sql.build_steps.at(at) = with_ctes(writes.page, sql.build_steps.at(at));
  sql.range_insert = with_ctes(writes.range_insert, sql.range_insert);
  sql.range_rewrite = with_ctes(writes.range_rewrite, sql.range_rewrite);
  std::string both =
      held_or_rejected(d, held, qualified(rejected->target_schema, rejected->target_table));
  sql.page_all_held_keys = page_all_keys(d, both);
  sql.held_keys_from = both;
  sql.page_sweep_range = page_range(d, both);
}

std::string sync_rejected_matches(const TransformDef& d) {
  std::string table = qualified(d.target_schema, d.rejected_table());
  auto rejected = rejected_matches(d);
  if (!rejected) return "DROP TABLE IF EXISTS " + table;
  std::string ddl;
  for (const auto& s : compile_transform(*rejected).create) ddl += s + "; ";
  return fmt::format("DO $trellis$ BEGIN IF to_regclass({}) IS NULL THEN {}END IF; END $trellis$",
                     base::literal(table), ddl);
}

}  // namespace trellis::compile
