// SQL fragments the transform shapes share: column DDL, the page's keys,
// keyset paging for builds, and change detection between rows.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "catalog/definition.hpp"

namespace trellis::compile {

// "name" type [COLLATE c] [NOT NULL]
std::string column_ddl(const catalog::Column& c, bool not_null);
// ALTER TABLE schema.table ALTER COLUMN c TYPE t [COLLATE x], ... giving each
// column the type (and collation) in `columns`.
std::string alter_column_types(const std::string& schema, const std::string& table,
                               const std::vector<catalog::Column>& columns);
// SELECT <decoded key columns> FROM the page WHERE tbl = <source table id>
std::string page_keys_cte(const catalog::TransformDef& d);
// The page's keys (__trellis_keys) with no row in __trellis_src: the rows a
// derive deletes. Computed between the two CTEs first, so the target is
// probed only for those keys (usually none) rather than for every page key.
std::string keys_without_source(const std::vector<catalog::Column>& key);
// __t.f IS DISTINCT FROM <source>.f (the derived row), through text when
// the type has no equality or equal values print differently; changed()
// compares with __s.
std::string changed_from(const catalog::Field& f, const std::string& source);
std::string changed(const catalog::Field& f);
// See TransformSql: the chunk's last key after $1 in `table`'s key order.
std::string chunk_bound(const std::vector<catalog::Column>& key, const std::string& table);
// Fills the page with `table`'s keys in ($1, $2].
std::string page_range(const catalog::TransformDef& d, const std::string& table);
// Fills the page with every key `table` holds.
std::string page_all_keys(const catalog::TransformDef& d, const std::string& table);
// Locks rows of `table` keyed by `cols` for the decoded page rows `rows_sql`
// (whose columns are the decoded key), inserting placeholders for absent ones
// in key order; existing rows are locked and left unwritten (ON CONFLICT DO
// UPDATE ... WHERE false). With `key_columns` set, only the first that many
// of `cols` are the key (the order); the rest are values the inserted rows
// carry.
std::string lock_rows(const std::string& table, const std::vector<catalog::Column>& cols,
                      const std::string& conflict_target, const std::string& rows_sql,
                      size_t key_columns = 0);
// A value a row inserted by lock_rows_carrying holds: its column and the
// expression giving it over the page's source row `__s` (NULL when the key
// has none).
struct CarriedValue {
  catalog::Column column;
  std::string sql;
};
// A build chunk's lock of `table` (keyed like the transform's source): the
// page's keys left-joined to `sources_sql` (the page's current source rows,
// run as the CTE __trellis_src), with lock_rows' semantics, except that an
// absent key's row is inserted already carrying `values` instead of NULLs.
// The guess is corrected by the statement after it, which reads the source
// under a later snapshot (I1); in a fresh build it spares the second write.
std::string lock_rows_carrying(const std::string& table, const catalog::TransformDef& d,
                               const std::string& sources_sql,
                               const std::vector<CarriedValue>& values);

}  // namespace trellis::compile
