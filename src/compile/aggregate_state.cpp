// Running state of incremental aggregate fields; see aggregate_state.hpp.
// MIN/MAX of a column read the group's extreme ledger row through an index
// on (group, column). The other replacements mirror PostgreSQL's final
// functions: COUNT is the count;
// SUM is NULL without non-null inputs, NaN once a NaN was summed, else the
// sum (bigint for smallint/integer, numeric otherwise); AVG divides the
// numeric sum by the count with numeric division, as int8_avg and
// numeric_avg do. Numeric arguments have a declared scale (see
// bind/incremental_plan), so the sum's display scale is that scale.
#include "compile/aggregate_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/sql_text.hpp"

namespace trellis::compile {

using base::ident;
using base::qualified;

using catalog::Accumulator;
using catalog::TransformDef;

namespace {

std::string count_col(int i) {
  return "__c" + std::to_string(i);
}
std::string sum_col(int i) {
  return "__s" + std::to_string(i);
}
std::string nan_col(int i) {
  return "__nan" + std::to_string(i);
}

std::string arg(const Accumulator& a) {
  return "(" + a.arg_sql + ")";
}

std::string is_nan(const Accumulator& a) {
  return arg(a) + " = 'NaN'::numeric";
}

// The value a summed argument adds to "__s<i>".
std::string summand(const Accumulator& a) {
  if (a.numeric()) return fmt::format("CASE WHEN {} THEN 0 ELSE {} END", is_nan(a), arg(a));
  return arg(a) + "::numeric";
}

std::string sum_value(const Accumulator& a, const std::string& s, const std::string& c,
                      const std::string& nan) {
  if (a.numeric())
    return fmt::format("(CASE WHEN {} = 0 THEN NULL WHEN {} > 0 THEN 'NaN'::numeric ELSE {} END)",
                       c, nan, s);
  if (a.arg_type == "bigint") return fmt::format("(CASE WHEN {} > 0 THEN {} END)", c, s);
  return fmt::format("(CASE WHEN {} > 0 THEN {}::bigint END)", c, s);
}

std::string avg_value(const Accumulator& a, const std::string& s, const std::string& c,
                      const std::string& nan) {
  std::string when_nan =
      a.numeric() ? fmt::format(" WHEN {} > 0 THEN 'NaN'::numeric", nan) : std::string();
  return fmt::format("(CASE WHEN {0} = 0 THEN NULL{1} ELSE {2} / {0}::numeric END)", c, when_nan,
                     s);
}

}  // namespace

std::vector<std::string> state_columns(const TransformDef& d) {
  if (!d.any_incremental()) return {};
  std::vector<std::string> cols = {"__n"};
  for (size_t i = 0; i < d.accumulators.size(); ++i) {
    int n = static_cast<int>(i + 1);
    cols.push_back(count_col(n));
    if (!d.accumulators[i].summed) continue;
    cols.push_back(sum_col(n));
    if (d.accumulators[i].numeric()) cols.push_back(nan_col(n));
  }
  return cols;
}

std::string state_column_type(const std::string& name) {
  return name.rfind("__s", 0) == 0 ? "numeric" : "bigint";
}

std::string state_columns_ddl(const TransformDef& d) {
  std::string out;
  for (const auto& c : state_columns(d))
    out += fmt::format("{} {} NOT NULL DEFAULT 0, ", ident(c), state_column_type(c));
  return out;
}

std::vector<std::string> contributions(const TransformDef& d) {
  if (!d.any_incremental()) return {};
  std::vector<std::string> out = {"1"};
  for (const auto& a : d.accumulators) {
    out.push_back(fmt::format("({} IS NOT NULL)::int", arg(a)));
    if (!a.summed) continue;
    out.push_back(fmt::format("coalesce({}, 0)", summand(a)));
    if (a.numeric()) out.push_back(fmt::format("coalesce(({})::int, 0)", is_nan(a)));
  }
  return out;
}

std::string absolute_state(const TransformDef& d) {
  std::vector<std::string> cols = state_columns(d);
  std::string out;
  size_t k = 0;
  auto add = [&](const std::string& expr) {
    out += fmt::format(", {} AS {}", expr, ident(cols[k++]));
  };
  if (cols.empty()) return out;
  add("count(*)");
  for (const auto& a : d.accumulators) {
    add(fmt::format("count({})", arg(a)));
    if (!a.summed) continue;
    add(fmt::format("coalesce(sum({}), 0)", summand(a)));
    if (a.numeric()) add(fmt::format("count(*) FILTER (WHERE {})", is_nan(a)));
  }
  return out;
}

std::vector<std::string> extreme_indexes(const TransformDef& d) {
  std::set<std::string> columns;
  for (const auto& f : d.fields)
    for (const auto& c : f.calls)
      if (c.kind == "min" || c.kind == "max") columns.insert(c.column);
  std::vector<std::string> out;
  for (const auto& c : columns)
    out.push_back(fmt::format("CREATE INDEX ON {} (\"__ledger_group\", {}) WHERE \"__present\"",
                              qualified(d.target_schema, d.ledger_table()), ident(c)));
  return out;
}

std::string field_from_state(const TransformDef& d, const catalog::Field& f,
                             const std::string& alias) {
  std::vector<catalog::IncrementalCall> calls = f.calls;
  std::sort(calls.begin(), calls.end(),
            [](const auto& a, const auto& b) { return a.begin > b.begin; });
  std::string sql = f.sql;
  auto col = [&](const std::string& name) { return alias + "." + ident(name); };
  for (const auto& call : calls) {
    std::string value;
    if (call.kind == "count_star") {
      value = col("__n");
    } else if (call.kind == "min" || call.kind == "max") {
      // Answered by the (group, column) index on the ledger.
      value = fmt::format(
          "(SELECT {0}(__m.{1}) FROM {2} __m WHERE __m.\"__ledger_group\" = {3} AND "
          "__m.\"__present\")",
          call.kind, ident(call.column), qualified(d.target_schema, d.ledger_table()),
          col("__group"));
    } else {
      const Accumulator& a = d.accumulators.at(call.accumulator - 1);
      std::string c = col(count_col(call.accumulator));
      std::string s = col(sum_col(call.accumulator));
      std::string nan = col(nan_col(call.accumulator));
      if (call.kind == "count") value = c;
      if (call.kind == "sum") value = sum_value(a, s, c, nan);
      if (call.kind == "avg") value = avg_value(a, s, c, nan);
    }
    sql.replace(call.begin, call.end - call.begin, value);
  }
  return sql;
}

}  // namespace trellis::compile
