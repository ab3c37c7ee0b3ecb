// Probe view rendering; see probe_sql.hpp.
#include "bind/probe_sql.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"

namespace trellis::bind {

using base::ident;
using base::join;
using base::qualified;

std::string probe_field_view(const std::string& view, const std::string& source_schema,
                             const std::string& source_table, const std::string& alias,
                             const std::string& expr_sql) {
  return fmt::format("CREATE TEMP VIEW {} AS SELECT ({}) AS \"f\" FROM {} AS {}", ident(view),
                     expr_sql, qualified(source_schema, source_table), ident(alias));
}

std::string probe_where_view(const std::string& view, const std::string& source_schema,
                             const std::string& source_table, const std::string& alias,
                             const std::string& predicate_sql) {
  return fmt::format("CREATE TEMP VIEW {} AS SELECT 1 AS \"f\" FROM {} AS {} WHERE ({})",
                     ident(view), qualified(source_schema, source_table), ident(alias),
                     predicate_sql);
}

std::string probe_grouped_view(const std::string& view, const std::string& source_schema,
                               const std::string& source_table, const std::string& alias,
                               const std::string& expr_sql,
                               const std::vector<catalog::Column>& group) {
  std::string by = join<catalog::Column>(
      group, ", ", [&](const catalog::Column& c) { return ident(alias) + "." + ident(c.name); });
  return probe_field_view(view, source_schema, source_table, alias, expr_sql) + " GROUP BY " + by;
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
