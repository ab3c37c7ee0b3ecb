// Oracle comparison SQL; see oracle.hpp. Aggregates of floating-point values
// depend on the order rows are summed in, which no plain SELECT fixes either
// (a heap scan's order changes with updates), so float fields of GROUP BY
// targets are compared to 12 significant digits (6 for real), with -0 read
// as 0 (MIN/MAX over a group holding both return whichever comes first).
#include "compile/oracle.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "compile/aggregate_state.hpp"
#include "compile/transform_sql.hpp"

namespace trellis::compile {

using base::ident;
using base::join;
using base::literal;
using base::qualified;

namespace {

bool is_float(const catalog::Column& c) {
  return c.type == "double precision" || c.type == "real";
}

bool rounded(const catalog::TransformDef& def, const catalog::Field& f) {
  return def.shape == catalog::Shape::aggregate && is_float(f.column);
}

std::string rounded_json(const catalog::Field& f, const std::string& value) {
  std::string pattern = f.column.type == "real" ? "9.99999EEEE" : "9.99999999999EEEE";
  return fmt::format("coalesce(to_jsonb(to_char({}::float8 + 0, {})), 'null')", value,
                     literal(pattern));
}

// jsonb of one row of `alias`; for aggregates without the hidden "__group"
// and with float fields rounded.
std::string row_json(const catalog::TransformDef& def, const std::string& alias) {
  if (def.shape != catalog::Shape::aggregate) return fmt::format("to_jsonb({})", alias);
  // The hidden identity and the running state of incremental fields.
  std::vector<std::string> hidden = state_columns(def);
  hidden.insert(hidden.begin(), "__group");
  std::string out =
      fmt::format("to_jsonb({}) - ARRAY[{}]::text[]", alias,
                  join<std::string>(hidden, ", ", [](const std::string& c) { return literal(c); }));
  for (const auto& f : def.fields) {
    if (!rounded(def, f)) continue;
    out = fmt::format("jsonb_set({}, ARRAY[{}], {})", out, literal(f.name),
                      rounded_json(f, alias + "." + ident(f.name)));
  }
  return out;
}

// The target's columns the definition writes, so that columns an adopted
// target kept beside them (ADOPT EXISTING TABLE) are not compared.
std::string defined_columns(const catalog::TransformDef& def) {
  std::vector<std::string> names;
  if (def.shape == catalog::Shape::aggregate) {
    for (const auto& g : def.group) names.push_back(g.name);
  } else {
    for (const auto& k : def.key) names.push_back(k.name);
    for (const auto& f : def.fan_key()) names.push_back(f.column.name);
    for (const auto& h : def.held_key()) names.push_back(h.column.name);
  }
  for (const auto& f : def.fields) names.push_back(f.name);
  if (names.empty()) return "";
  return join<std::string>(names, ", ", [](const std::string& n) { return ident(n); });
}

}  // namespace

std::string oracle_diff_sql(const catalog::TransformDef& def, int limit) {
  auto sql = compile_transform(def);
  std::string expected =
      fmt::format("SELECT {} AS r FROM ({}) __o", row_json(def, "__o"), sql.oracle_select);
  std::string actual =
      fmt::format("SELECT {} AS r FROM (SELECT {} FROM {}) __t", row_json(def, "__t"),
                  defined_columns(def), qualified(def.target_schema, def.target_table));
  return fmt::format(
      "(SELECT 'missing' AS side, r::text FROM ({0} EXCEPT ALL {1}) m) UNION ALL "
      "(SELECT 'extra', r::text FROM ({1} EXCEPT ALL {0}) x) ORDER BY 1, 2 LIMIT {2}",
      expected, actual, limit);
}

std::string compared_value(const catalog::TransformDef& def, const catalog::Field& f,
                           const std::string& value) {
  return rounded(def, f) ? rounded_json(f, value) : fmt::format("to_jsonb({})", value);
}

}  // namespace trellis::compile
