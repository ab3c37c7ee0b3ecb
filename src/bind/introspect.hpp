// What define needs to know about a table from the system catalogs: its
// kind, key, columns (with type, collation and whether the type has an
// equality operator), and the conditions that make it unusable as a source.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/definition.hpp"
#include "pg/connection.hpp"

namespace trellis::bind {

struct TableColumn {
  catalog::Column column;
  std::string base_type;  // typname of the (domain's base) type
  bool not_null = false;
  bool deterministic = true;
  bool is_enum = false;
};

struct TableInfo {
  unsigned oid = 0;
  std::string schema;
  std::string name;
  char relkind = 'r';
  bool rls_applies = false;
  bool subscribed = false;
  bool in_hierarchy = false;
  std::vector<TableColumn> columns;
  std::vector<std::string> primary_key;
  std::vector<std::vector<std::string>> unique_keys;  // plain unique indexes (no predicate/expr)

  const TableColumn* find(const std::string& column) const;
};

std::optional<TableInfo> describe_table(pg::Connection& conn, const std::string& schema,
                                        const std::string& name);
bool relation_exists(pg::Connection& conn, const std::string& schema, const std::string& name);

// The type, collation and comparability of column `f` of a (temporary) view.
catalog::Column view_column(pg::Connection& conn, const std::string& view, const std::string& name);

struct CalledFunction {
  std::string signature;      // regprocedure text
  char volatility = 'i';      // pg_proc.provolatile
  char kind = 'f';            // pg_proc.prokind
  char aggregate_kind = 'n';  // pg_aggregate.aggkind for aggregates
  bool returns_set = false;
};
// Every function and operator function a temporary view calls, read from
// its stored query tree (built-in functions record no pg_depend rows).
std::vector<CalledFunction> functions_in_view(pg::Connection& conn, const std::string& view);

// Whether `table` has a valid index whose leading key columns are exactly
// `columns` (in any order).
bool has_index_leading_with(pg::Connection& conn, const TableInfo& table,
                            const std::vector<std::string>& columns);

}  // namespace trellis::bind
