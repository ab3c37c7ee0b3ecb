// Probe view rendering; see probe_sql.hpp.
#include "bind/probe_sql.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"

namespace trellis::bind {

using base::ident;
using base::join;
using base::qualified;

std::string probe_view_over(const std::string& view, const std::string& from,
                            const std::string& expr_sql) {
  return fmt::format("CREATE TEMP VIEW {} AS SELECT ({}) AS \"f\" FROM {}", ident(view), expr_sql,
                     from);
}

std::string probe_where_over(const std::string& view, const std::string& from,
                             const std::string& predicate_sql) {
  return fmt::format("CREATE TEMP VIEW {} AS SELECT 1 AS \"f\" FROM {} WHERE ({})", ident(view),
                     from, predicate_sql);
}

std::string probe_field_view(const std::string& view, const std::string& source_schema,
                             const std::string& source_table, const std::string& alias,
                             const std::string& expr_sql) {
  return probe_view_over(view, qualified(source_schema, source_table) + " AS " + ident(alias),
                         expr_sql);
}

std::string probe_where_view(const std::string& view, const std::string& source_schema,
                             const std::string& source_table, const std::string& alias,
                             const std::string& predicate_sql) {
  return probe_where_over(view, qualified(source_schema, source_table) + " AS " + ident(alias),
                          predicate_sql);
}

std::string probe_grouped_view(const std::string& view, const std::string& alias,
                               const std::string& expr_sql,
                               const std::vector<catalog::Column>& group,
                               const std::vector<catalog::JoinDef>& joins) {
  std::string from = qualified("pg_temp", alias) + " AS " + ident(alias);
  for (const auto& j : joins) from += catalog::join_item(j, j.left_outer);
  std::string out = probe_view_over(view, from, expr_sql);
  // The empty grouping set: one group of all rows, so a column outside an
  // aggregate is refused as it is under a GROUP BY.
  if (group.empty()) return out + " GROUP BY ()";
  return out + " GROUP BY " + join<catalog::Column>(group, ", ", [&](const catalog::Column& c) {
           return ident(alias) + "." + ident(c.name);
         });
}

std::string probe_group_index(const std::string& index, const std::string& alias,
                              const std::string& expr_sql) {
  return fmt::format("CREATE INDEX {} ON pg_temp.{} (({}))", ident(index), ident(alias), expr_sql);
}

std::string probe_group_column(const std::string& alias, const catalog::Column& column) {
  return fmt::format("ALTER TABLE pg_temp.{} ADD COLUMN {} {}{}", ident(alias), ident(column.name),
                     column.type, column.collation.empty() ? "" : " COLLATE " + column.collation);
}

std::string probe_table(const std::string& alias, const std::string& source_schema,
                        const std::string& source_table) {
  return fmt::format("CREATE TEMP TABLE {} (LIKE {})", ident(alias),
                     qualified(source_schema, source_table));
}

std::string probe_immutable_expression(const std::string& alias, const std::string& expr_sql) {
  return fmt::format("CREATE INDEX ON pg_temp.{} ((({}) IS NULL))", ident(alias), expr_sql);
}

std::string probe_immutable_predicate(const std::string& alias, const std::string& predicate_sql) {
  return fmt::format("CREATE INDEX ON pg_temp.{} ((true)) WHERE ({})", ident(alias), predicate_sql);
}

}  // namespace trellis::bind
