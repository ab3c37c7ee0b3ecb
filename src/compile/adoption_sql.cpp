// Adopted targets' DDL; see adoption_sql.hpp.
#include "compile/adoption_sql.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "compile/shared_sql.hpp"
#include "compile/transform_sql.hpp"

namespace trellis::compile {

using base::ident;
using base::join;

namespace {

std::string column_list(const std::vector<std::string>& names) {
  return "(" + join<std::string>(names, ", ", [](const std::string& n) { return ident(n); }) + ")";
}

std::string index_sql(const std::string& table, const AddedIndex& ix) {
  if (ix.primary)
    return fmt::format("ALTER TABLE {} ADD PRIMARY KEY {}", table, column_list(ix.columns));
  if (ix.unique)
    return fmt::format("ALTER TABLE {} ADD UNIQUE {}{}", table,
                       ix.nulls_not_distinct ? "NULLS NOT DISTINCT " : "", column_list(ix.columns));
  return fmt::format("CREATE INDEX ON {} {}", table, column_list(ix.columns));
}

}  // namespace

std::string lock_adopted_target(const catalog::TransformDef& def) {
  return fmt::format("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE",
                     base::qualified(def.target_schema, def.target_table));
}

std::vector<std::string> adopt_target_sql(const catalog::TransformDef& def,
                                          const TargetAdditions& additions) {
  std::string table = base::qualified(def.target_schema, def.target_table);
  std::vector<std::string> out;
  if (!additions.columns.empty())
    out.push_back(fmt::format("ALTER TABLE {} {}", table,
                              join<AddedColumn>(additions.columns, ", ", [](const AddedColumn& c) {
                                std::string ddl = "ADD COLUMN " + column_ddl(c.column, c.not_null);
                                if (c.default_sql) ddl += " DEFAULT " + *c.default_sql;
                                return ddl;
                              })));
  for (const auto& ix : additions.indexes) out.push_back(index_sql(table, ix));
  return out;
}

std::vector<std::string> release_adopted_sql(const catalog::TransformDef& def) {
  std::vector<std::string> out = compile_transform(def).side_drop;
  if (!def.adopted_columns.empty())
    out.push_back(
        fmt::format("ALTER TABLE {} {}", base::qualified(def.target_schema, def.target_table),
                    join<std::string>(def.adopted_columns, ", ", [](const std::string& c) {
                      return "DROP COLUMN IF EXISTS " + ident(c);
                    })));
  return out;
}

}  // namespace trellis::compile
