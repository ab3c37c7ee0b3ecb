// What ADOPT EXISTING TABLE compares of a table, read from the system
// catalogs in one round trip: its columns with their defaults, every index
// (uniqueness, NULLS NOT DISTINCT, the constraint it backs), the CHECK,
// foreign-key and exclusion constraints on it or referencing it, its
// triggers, and who owns it. Names come with PostgreSQL's own quoting
// (quote_ident), for the statements refusals suggest.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/definition.hpp"
#include "pg/connection.hpp"

namespace trellis::bind {

struct ShapeColumn {
  catalog::Column column;  // name, format_type, collation (as table_description reads it)
  std::string quoted;      // quote_ident(name)
  bool not_null = false;
  std::optional<std::string> default_sql;  // pg_get_expr of its default
  bool generated = false;                  // GENERATED ALWAYS AS (...) STORED
  char identity = 0;                       // 'a' (ALWAYS), 'd' (BY DEFAULT) or 0
  // Whether an INSERT that leaves the column out still gives it a value.
  bool fills_itself() const { return default_sql || generated || identity; }
};

struct ShapeIndex {
  std::string quoted;                // the index's name
  std::vector<std::string> columns;  // key columns in order; "" for an expression
  bool unique = false;
  bool primary = false;
  bool nulls_not_distinct = false;
  bool partial = false;
  bool expressions = false;
  std::string constraint;  // quoted name of the constraint it backs, if any
};

struct ShapeConstraint {
  std::string quoted;  // its name
  char kind = 'c';     // pg_constraint.contype: c (CHECK), f (foreign key), x (EXCLUDE)
  std::string definition;
  std::string table;  // schema.table it is on (quoted); another table for a referencing key
  bool on_table = true;
};

struct ShapeTrigger {
  std::string quoted;
  bool before_row = false;  // BEFORE or INSTEAD OF, FOR EACH ROW: it may change or skip rows
};

struct TableShape {
  std::string quoted;  // schema.table
  char relkind = 'r';
  bool inherits = false;             // a parent or a child in a table inheritance hierarchy
  bool forced_rls = false;           // row-level security enabled and forced on its owner
  bool owned = true;                 // the current role is (a member of) its owner
  std::string owner_quoted;          // its owner
  std::string role_quoted;           // the current role
  std::vector<ShapeColumn> columns;  // in attnum order
  std::vector<ShapeIndex> indexes;
  std::vector<ShapeConstraint> constraints;
  std::vector<ShapeTrigger> triggers;

  const ShapeColumn* find(const std::string& column) const;
  const ShapeIndex* primary_key() const;
};

// `table` is a relation name as SQL text (quoted, schema-qualified; pg_temp
// for a probe's table); nullopt when no relation has that name.
std::optional<TableShape> describe_shape(pg::Connection& conn, const std::string& table);

// How many rows `table` holds, counting up to `limit`.
long count_rows_up_to(pg::Connection& conn, const std::string& table, long limit);

}  // namespace trellis::bind
