// Shared SQL fragments; see shared_sql.hpp.
#include "compile/shared_sql.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "compile/key_codec.hpp"
#include "compile/transform_sql.hpp"

namespace trellis::compile {

using base::ident;
using base::join;
using base::qualified;

using catalog::Column;
using catalog::Field;
using catalog::TransformDef;

std::vector<std::string> create_temp_tables_sql() {
  return {
      "CREATE TEMP TABLE IF NOT EXISTS trellis_page (tbl int NOT NULL, key text[] NOT NULL, "
      "PRIMARY KEY (tbl, key)) ON COMMIT DELETE ROWS",
      "CREATE TEMP TABLE IF NOT EXISTS trellis_groups (tid int NOT NULL, grp text NOT NULL, "
      "delta numeric[], PRIMARY KEY (tid, grp)) ON COMMIT DELETE ROWS",
      "CREATE TEMP TABLE IF NOT EXISTS trellis_hidden (tbl int NOT NULL, key text[] NOT NULL) ON "
      "COMMIT DELETE ROWS",
      "CREATE TEMP TABLE IF NOT EXISTS trellis_page_saved (tbl int NOT NULL, key text[] NOT NULL, "
      "n bigint NOT NULL, PRIMARY KEY (tbl, n)) ON COMMIT DELETE ROWS"};
}

std::string column_ddl(const Column& c, bool not_null) {
  std::string out = ident(c.name) + " " + c.type;
  if (!c.collation.empty()) out += " COLLATE " + c.collation;
  if (not_null) out += " NOT NULL";
  return out;
}

std::string alter_column_types(const std::string& schema, const std::string& table,
                               const std::vector<Column>& columns) {
  return fmt::format("ALTER TABLE {} {}", qualified(schema, table),
                     join<Column>(columns, ", ", [](const Column& c) {
                       std::string out = "ALTER COLUMN " + ident(c.name) + " TYPE " + c.type;
                       if (!c.collation.empty()) out += " COLLATE " + c.collation;
                       return out;
                     }));
}

std::string keys_without_source(const std::vector<catalog::Column>& key) {
  return fmt::format(
      "SELECT * FROM __trellis_keys __k WHERE NOT EXISTS (SELECT 1 FROM __trellis_src __s WHERE "
      "{})",
      key_equal(key, "__s", "__k"));
}

std::string page_keys_cte(const TransformDef& d) {
  return fmt::format("SELECT {} FROM {} p WHERE p.tbl = {}", decode_key_columns(d.key, "p.key"),
                     kPageTable, d.source_table_id);
}

std::string changed(const Field& f) {
  return changed_from(f, "__s");
}

std::string changed_from(const Field& f, const std::string& source) {
  // Numerics and floats have equal values that print differently (1 and
  // 1.00, 0 and -0); the target must hold what the SELECT prints.
  const std::string& type = f.column.type;
  bool by_text = !f.column.comparable || type.rfind("numeric", 0) == 0 ||
                 type == "double precision" || type == "real";
  if (!by_text) return fmt::format("__t.{0} IS DISTINCT FROM {1}.{0}", ident(f.name), source);
  return fmt::format("__t.{0}::text IS DISTINCT FROM {1}.{0}::text", ident(f.name), source);
}

// The inner SELECT reads only the key columns, so the rows OFFSET skips are
// not encoded (an index-only scan where the visibility map allows).
std::string chunk_bound(const std::vector<Column>& key, const std::string& table) {
  std::string cols =
      join<Column>(key, ", ", [](const Column& c) { return "__r." + ident(c.name); });
  return fmt::format(
      "SELECT {} FROM (SELECT {} FROM {} AS __r WHERE $1::text[] IS NULL OR {} ORDER BY {} OFFSET "
      "$2::int - 1 LIMIT 1) AS __r",
      encode_key(key, "__r"), cols, table, key_after(key, "__r", "$1::text[]"), cols);
}

std::string page_range(const TransformDef& d, const std::string& table) {
  return fmt::format(
      "INSERT INTO {} (tbl, key) SELECT {}, {} FROM {} AS __r WHERE ($1::text[] IS NULL OR {}) "
      "AND ($2::text[] IS NULL OR {}) ON CONFLICT DO NOTHING",
      kPageTable, d.source_table_id, encode_key(d.key, "__r"), table,
      key_after(d.key, "__r", "$1::text[]"), key_at_most(d.key, "__r", "$2::text[]"));
}

std::string page_all_keys(const TransformDef& d, const std::string& table) {
  return fmt::format(
      "INSERT INTO {} (tbl, key) SELECT {}, {} FROM {} AS __r ON CONFLICT DO NOTHING", kPageTable,
      d.source_table_id, encode_key(d.key, "__r"), table);
}

std::string lock_rows(const std::string& table, const std::vector<Column>& cols,
                      const std::string& conflict_target, const std::string& rows_sql,
                      size_t key_columns) {
  std::string list = key_tuple(cols, "");
  std::string order;
  size_t ordered = key_columns ? key_columns : cols.size();
  for (size_t i = 0; i < ordered; ++i) order += (i ? ", " : "") + std::to_string(i + 1);
  return fmt::format(
      "INSERT INTO {} AS __t {} {} ORDER BY {} ON CONFLICT {} DO UPDATE SET {} = EXCLUDED.{} "
      "WHERE false",
      table, list, rows_sql, order, conflict_target, ident(cols[0].name), ident(cols[0].name));
}

std::string lock_rows_carrying(const std::string& table, const TransformDef& d,
                               const std::string& sources_sql,
                               const std::vector<CarriedValue>& values) {
  std::vector<Column> cols = d.key;
  std::string select =
      join<Column>(d.key, ", ", [](const Column& c) { return "__k." + ident(c.name); });
  for (const auto& v : values) {
    cols.push_back(v.column);
    select += ", " + v.sql;
  }
  std::string rows = fmt::format(
      "WITH __trellis_keys AS ({}), __trellis_src AS ({}) SELECT {} FROM __trellis_keys __k "
      "LEFT JOIN __trellis_src __s ON {}",
      page_keys_cte(d), sources_sql, select, key_equal(d.key, "__s", "__k"));
  return lock_rows(table, cols, key_tuple(d.key, ""), rows, d.key.size());
}

TransformSql compile_aggregate(const TransformDef& def);
TransformSql compile_one_to_one(const TransformDef& def);

TransformSql compile_transform(const TransformDef& def) {
  return def.shape == catalog::Shape::aggregate ? compile_aggregate(def) : compile_one_to_one(def);
}

}  // namespace trellis::compile
