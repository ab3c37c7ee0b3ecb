// What the binder knows about a table a statement names, read from the
// system catalogs in one round trip: its kind, the conditions that make it
// unusable as a source, its columns (type, collation, comparability,
// nullability) and its indexes. Every check define makes of a table runs
// over this description in memory.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/definition.hpp"
#include "pg/connection.hpp"

namespace trellis::bind {

struct DescribedColumn {
  catalog::Column column;
  std::string base_type;  // typname of the (domain's base) type
  bool not_null = false;
  bool deterministic = true;  // its collation (if any) is deterministic
  bool is_enum = false;
  bool generated = false;  // GENERATED ALWAYS AS (...) STORED
  int attnum = 0;          // pg_attribute.attnum
};

// A valid index of the table (invalid ones are left out).
struct DescribedIndex {
  // pg_index.indkey in order, INCLUDE columns last; nullopt for an
  // expression.
  std::vector<std::optional<std::string>> columns;
  // pg_get_indexdef(index, n, true) of each of `columns` (an expression's
  // text), read only by describe_index_keys and only for indexes with
  // expressions; empty otherwise.
  std::vector<std::string> key_texts;
  unsigned oid = 0;
  std::size_t key_count = 0;  // pg_index.indnkeyatts: the leading `columns` that are keys
  bool unique = false;
  bool primary = false;
  bool partial = false;      // has a predicate
  bool expressions = false;  // has an expression column
};

struct TableDescription {
  unsigned oid = 0;
  std::string schema;
  std::string name;
  char relkind = 'r';
  bool rls_applies = false;  // row-level security applies to the current role
  bool subscribed = false;   // a logical-replication subscription writes it
  // In a plain (not partitioning) inheritance hierarchy, as parent or child.
  bool inherits = false;
  // For a partition (or a partitioned table that is one), its root, quoted;
  // empty otherwise.
  std::string partition_of;
  bool partitioned() const { return relkind == 'p'; }
  std::vector<DescribedColumn> columns;  // in attnum order, dropped ones left out
  std::vector<DescribedIndex> indexes;
  // From `indexes`: the columns (INCLUDE ones too) of the primary key and of
  // every unique index without predicate or expression, primary key included.
  std::vector<std::string> primary_key;
  std::vector<std::vector<std::string>> unique_keys;

  const DescribedColumn* find(const std::string& column) const;
  // Whether a non-partial index's leading keys are exactly `keys` (in any
  // order), each a column name or an expression's index key text
  // (DescribedIndex::key_texts). False for no keys.
  bool has_index_leading_with(const std::vector<std::string>& columns) const;
};

struct TableName {
  std::string schema;
  std::string name;
};

// Describes all `tables` in one round trip (three catalog reads in one
// pipeline); an entry is nullopt when no relation of that name exists in
// that schema.
std::vector<std::optional<TableDescription>> describe_tables(pg::Connection& conn,
                                                             const std::vector<TableName>& tables);
std::optional<TableDescription> describe_table(pg::Connection& conn, const std::string& schema,
                                               const std::string& name);

// Reads the key texts of `t`'s indexes that have expressions. Separate from
// describe_tables because pg_get_indexdef locks the index (AccessShare), so
// it waits for a session holding ACCESS EXCLUSIVE on the table; only a
// GROUP BY of an expression, whose source index is one, needs it.
void describe_index_keys(pg::Connection& conn, TableDescription& t);

// The type, collation and comparability of column "f" of a temporary probe
// view, as the column `name`.
catalog::Column view_column(pg::Connection& conn, const std::string& view, const std::string& name);
// The read view_column runs ($1: the view), for a caller that pipelines it,
// and the column its result gives.
std::string view_column_sql();

// A column's explicit collation as define records it (schema.collation, ''
// when it is its type's default), over pg_attribute `a` joined as
// kColumnTypeJoins says: one rendering for every read that compares columns.
extern const char* const kColumnCollation;
extern const char* const kColumnTypeJoins;
catalog::Column view_column_from(const pg::Result& res, const std::string& name);

}  // namespace trellis::bind
