// Renders the 1-1 re-derive. The page holds encoded source keys; the lock
// statement upserts placeholders with ON CONFLICT DO UPDATE ... WHERE false,
// which locks existing rows without rewriting them; the derive statement runs
// later (a fresh snapshot) and writes only rows whose values changed.
#include "compile/one_to_one.hpp"

#include <fmt/format.h>

#include "compile/key_codec.hpp"
#include "compile/sql_text.hpp"

namespace trellis::compile {

using catalog::Column;
using catalog::Field;
using catalog::TransformDef;

std::string create_page_table_sql() {
  return "CREATE TEMP TABLE IF NOT EXISTS trellis_page (tbl int NOT NULL, key text[] NOT NULL, "
         "PRIMARY KEY (tbl, key)) ON COMMIT DELETE ROWS";
}

namespace {

std::string column_ddl(const Column& c, bool not_null) {
  std::string out = ident(c.name) + " " + c.type;
  if (!c.collation.empty()) out += " COLLATE " + c.collation;
  if (not_null) out += " NOT NULL";
  return out;
}

std::string create_target(const TransformDef& d) {
  std::vector<std::string> cols;
  for (const auto& k : d.key) cols.push_back(column_ddl(k, true));
  for (const auto& f : d.fields) cols.push_back(column_ddl(f.column, false));
  std::string body;
  for (const auto& c : cols) body += c + ", ";
  return fmt::format("CREATE TABLE {} ({}PRIMARY KEY {})",
                     qualified(d.target_schema, d.target_table), body, key_tuple(d.key, ""));
}

std::string page_keys_cte(const TransformDef& d) {
  return fmt::format("SELECT {} FROM {} p WHERE p.tbl = {}", decode_key_columns(d.key, "p.key"),
                     kPageTable, d.source_table_id);
}

std::string lock(const TransformDef& d) {
  std::string cols = key_tuple(d.key, "");
  std::string order;
  for (size_t i = 0; i < d.key.size(); ++i) order += (i ? ", " : "") + std::to_string(i + 1);
  return fmt::format(
      "INSERT INTO {} AS __t {} SELECT {} FROM {} p WHERE p.tbl = {} ORDER BY {} "
      "ON CONFLICT {} DO UPDATE SET {} = EXCLUDED.{} WHERE false",
      qualified(d.target_schema, d.target_table), cols, decode_key_columns(d.key, "p.key"),
      kPageTable, d.source_table_id, order, cols, ident(d.key[0].name), ident(d.key[0].name));
}

std::string source_select(const TransformDef& d) {
  std::string alias = ident(d.alias);
  std::string cols = join<Column>(d.key, ", ", [&](const Column& c) {
    return alias + "." + ident(c.name) + " AS " + ident(c.name);
  });
  for (const auto& f : d.fields) cols += ", (" + f.sql + ") AS " + ident(f.name);
  return fmt::format("SELECT {} FROM {} AS {}", cols, qualified(d.source_schema, d.source_table),
                     alias);
}

std::string where_filter(const TransformDef& d) {
  return d.where_sql ? " AND (" + *d.where_sql + ")" : "";
}

std::string changed(const Field& f) {
  if (f.column.comparable) return fmt::format("__t.{0} IS DISTINCT FROM __s.{0}", ident(f.name));
  return fmt::format("__t.{0}::text IS DISTINCT FROM __s.{0}::text", ident(f.name));
}

std::string derive(const TransformDef& d) {
  std::string target = qualified(d.target_schema, d.target_table);
  std::string src = fmt::format(
      "{} WHERE {} IN (SELECT {} FROM __trellis_keys){}", source_select(d),
      key_tuple(d.key, ident(d.alias)),
      join<Column>(d.key, ", ", [](const Column& c) { return ident(c.name); }), where_filter(d));
  std::string update = "SELECT 1 WHERE false";
  if (!d.fields.empty()) {
    std::string sets = join<Field>(
        d.fields, ", ", [](const Field& f) { return ident(f.name) + " = __s." + ident(f.name); });
    std::string diff = join<Field>(d.fields, " OR ", changed);
    update =
        fmt::format("UPDATE {} AS __t SET {} FROM __trellis_src __s WHERE {} AND ({}) RETURNING 1",
                    target, sets, key_equal(d.key, "__t", "__s"), diff);
  }
  return fmt::format(
      "WITH __trellis_keys AS ({}), __trellis_src AS ({}), __trellis_upd AS ({}), "
      "__trellis_del AS (DELETE FROM {} AS __t USING __trellis_keys __k WHERE {} AND NOT EXISTS "
      "(SELECT 1 FROM __trellis_src __s WHERE {}) RETURNING 1) "
      "SELECT (SELECT count(*) FROM __trellis_upd), (SELECT count(*) FROM __trellis_del)",
      page_keys_cte(d), src, update, target, key_equal(d.key, "__t", "__k"),
      key_equal(d.key, "__s", "__t"));
}

std::string chunk_bound(const std::vector<Column>& key, const std::string& table) {
  return fmt::format(
      "SELECT {} FROM {} AS __r WHERE $1::text[] IS NULL OR {} ORDER BY {} OFFSET $2::int - 1 "
      "LIMIT 1",
      encode_key(key, "__r"), table, key_after(key, "__r", "$1::text[]"),
      join<Column>(key, ", ", [](const Column& c) { return "__r." + ident(c.name); }));
}

std::string page_range(const TransformDef& d, const std::string& table) {
  return fmt::format(
      "INSERT INTO {} (tbl, key) SELECT {}, {} FROM {} AS __r WHERE ($1::text[] IS NULL OR {}) "
      "AND ($2::text[] IS NULL OR {}) ON CONFLICT DO NOTHING",
      kPageTable, d.source_table_id, encode_key(d.key, "__r"), table,
      key_after(d.key, "__r", "$1::text[]"), key_at_most(d.key, "__r", "$2::text[]"));
}

}  // namespace

OneToOneSql compile_one_to_one(const TransformDef& d) {
  OneToOneSql sql;
  std::string target = qualified(d.target_schema, d.target_table);
  std::string source = qualified(d.source_schema, d.source_table);
  sql.create_target = create_target(d);
  sql.lock = lock(d);
  sql.derive = derive(d);
  sql.page_all_target_keys =
      fmt::format("INSERT INTO {} (tbl, key) SELECT {}, {} FROM {} AS __r ON CONFLICT DO NOTHING",
                  kPageTable, d.source_table_id, encode_key(d.key, "__r"), target);
  sql.source_chunk_bound = chunk_bound(d.key, source);
  sql.target_chunk_bound = chunk_bound(d.key, target);
  sql.page_source_range = page_range(d, source);
  sql.page_target_range = page_range(d, target);
  std::string where = d.where_sql ? " WHERE (" + *d.where_sql + ")" : "";
  sql.oracle_select = source_select(d) + where;
  return sql;
}

}  // namespace trellis::compile
