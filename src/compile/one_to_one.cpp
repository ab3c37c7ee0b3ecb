// Renders the 1-1 re-derive. The page holds encoded source keys; the first
// statement takes the advisory locks of the key slots they fall in (I1, see
// lock_key_slots); the derive statement runs later (a fresh snapshot) and
// writes only rows whose values changed, inserts the rows of keys the target
// lacks and deletes those whose source row is gone.
#include "compile/one_to_one.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/sql_text.hpp"
#include "compile/key_codec.hpp"
#include "compile/shared_sql.hpp"

namespace trellis::compile {

using base::ident;
using base::join;
using base::qualified;

using catalog::Column;
using catalog::Field;
using catalog::TransformDef;

namespace {

// The key of each held join's matched row (JoinDef::held) as fields every
// re-derive writes beside `fields`: read from the matched row, NULL without
// one; a change of that table finds the rows it matched through them.
std::vector<Field> with_held(const TransformDef& d, const std::vector<Field>& fields) {
  std::vector<Field> out = fields;
  for (const auto& h : d.held_key()) {
    Field f;
    f.name = h.column.name;
    f.sql = ident(h.alias) + "." + ident(h.joined_column);
    f.column = h.column;
    out.push_back(std::move(f));
  }
  return out;
}

// The target, keyed by the source key and the fan key (fanned_key), and
// the held keys (with_held) beside the fields, each indexed.
std::string create_target(const TransformDef& d) {
  std::vector<std::string> cols;
  for (const auto& k : d.key) cols.push_back(column_ddl(k, true));
  for (const auto& f : d.fan_key()) cols.push_back(column_ddl(f.column, !f.nullable));
  for (const auto& h : d.held_key()) cols.push_back(column_ddl(h.column, false));
  for (const auto& f : d.fields) cols.push_back(column_ddl(f.column, false));
  std::string body;
  for (const auto& c : cols) body += c + ", ";
  std::string identity;
  if (!d.identity.empty())
    identity = ", UNIQUE NULLS NOT DISTINCT (" +
               join<std::string>(d.identity, ", ", [](const std::string& n) { return ident(n); }) +
               ")";
  return fmt::format("CREATE TABLE {} ({}{}{})", qualified(d.target_schema, d.target_table), body,
                     fanned_key_constraint(d.key, d.fan_key()), identity);
}

std::string target_key_equal(const TransformDef& d, const std::string& a, const std::string& b) {
  return fanned_key_equal(d.key, d.fan_key(), a, b);
}

// SELECT <key>, <fields>[, <extra>] FROM the source under its alias.
std::string source_select(const TransformDef& d, const std::vector<Field>& fields,
                          const std::string& extra = "") {
  std::string alias = ident(d.alias);
  std::string cols = join<Column>(d.key, ", ", [&](const Column& c) {
    return alias + "." + ident(c.name) + " AS " + ident(c.name);
  });
  for (const auto& f : d.fan_key())
    cols +=
        fmt::format(", {}.{} AS {}", ident(f.alias), ident(f.joined_column), ident(f.column.name));
  for (const auto& f : fields) cols += ", (" + f.sql + ") AS " + ident(f.name);
  if (!extra.empty()) cols += ", " + extra;
  return fmt::format("SELECT {} FROM {}", cols, d.from_clause());
}

std::string where_filter(const TransformDef& d) {
  return d.where_sql ? " AND (" + *d.where_sql + ")" : "";
}

// The current source rows of the page's keys (those the WHERE keeps), with
// `fields` computed.
std::string page_sources(const TransformDef& d, const std::vector<Field>& fields) {
  return fmt::format("{} WHERE {} IN (SELECT {} FROM __trellis_keys){}", source_select(d, fields),
                     key_tuple(d.key, ident(d.alias)),
                     join<Column>(d.key, ", ", [](const Column& c) { return ident(c.name); }),
                     where_filter(d));
}

// Sets `fields` of the target rows whose values differ from __trellis_src.
std::string update_fields(const TransformDef& d, const std::vector<Field>& fields) {
  if (fields.empty()) return "SELECT 1 WHERE false";
  std::string sets = join<Field>(
      fields, ", ", [](const Field& f) { return ident(f.name) + " = __s." + ident(f.name); });
  return fmt::format("UPDATE {} AS __t SET {} FROM __trellis_src __s WHERE {} AND ({}) RETURNING 1",
                     qualified(d.target_schema, d.target_table), sets,
                     target_key_equal(d, "__t", "__s"), join<Field>(fields, " OR ", changed));
}

// The fields drains and builds write: all but the paused ones.
std::vector<Field> written_fields(const TransformDef& d) {
  std::vector<Field> out;
  for (const auto& f : d.fields)
    if (!d.paused(f.name)) out.push_back(f);
  return out;
}

// The source rows of the build range ($1, $2], with `fields` computed.
std::string range_sources(const TransformDef& d, const std::vector<Field>& fields) {
  std::string alias = ident(d.alias);
  return fmt::format("{} WHERE ($1::text[] IS NULL OR {}) AND ($2::text[] IS NULL OR {}){}",
                     source_select(d, fields), key_after(d.key, alias, "$1::text[]"),
                     key_at_most(d.key, alias, "$2::text[]"), where_filter(d));
}

std::string target_columns(const TransformDef& d, const std::vector<Field>& fields) {
  std::string cols = key_tuple(d.target_key(), "");
  cols.pop_back();
  for (const auto& f : fields) cols += ", " + ident(f.name);
  return cols + ")";
}

std::string fanned_derive(const TransformDef& d, const std::vector<Field>& fields);

// One MERGE over the page's distinct keys, each left-joined to its current
// source row (one that the WHERE keeps): a key whose source row is gone
// deletes its target row, a changed row is updated, a key the target lacks is
// inserted. Each key is one probe of the source and one of the target, and
// an unchanged row is not touched. No other transaction writes these keys
// meanwhile (the slot locks of the step before), so the INSERT meets no
// concurrent row of its key. Paused fields are not written: a row the derive
// inserts holds NULL in them, until their rebuild fills them.
std::string derive(const TransformDef& d, const std::vector<Field>& chosen) {
  if (d.fans_out()) return fanned_derive(d, chosen);
  std::vector<Field> fields = with_held(d, chosen);
  std::string page_keys, on, values;
  for (size_t i = 0; i < d.key.size(); ++i) {
    std::string name = ident(d.key[i].name), page_key = "\"__key" + std::to_string(i + 1) + "\"";
    page_keys += (i ? ", " : "") + fmt::format("__k.{} AS {}", name, page_key);
    on += (i ? " AND " : "") + fmt::format("__t.{} = __s.{}", name, page_key);
    values += (i ? ", " : "") + ("__s." + name);
  }
  for (const auto& f : fields) values += ", __s." + ident(f.name);
  std::string update;
  if (!fields.empty())
    update = fmt::format(
        " WHEN MATCHED AND ({}) THEN UPDATE SET {}", join<Field>(fields, " OR ", changed),
        join<Field>(fields, ", ",
                    [](const Field& f) { return ident(f.name) + " = __s." + ident(f.name); }));
  std::string sources = source_select(d, fields, "true AS \"__present\"");
  if (d.where_sql) sources += " WHERE (" + *d.where_sql + ")";
  return fmt::format(
      "MERGE INTO {0} AS __t USING (SELECT {1}, __r.* FROM (SELECT DISTINCT {2} FROM {3} p WHERE "
      "p.tbl = {4}) __k LEFT JOIN ({5}) __r ON {6}) AS __s ON {7} WHEN MATCHED AND "
      "__s.\"__present\" IS NULL THEN DELETE{8} WHEN NOT MATCHED AND __s.\"__present\" THEN "
      "INSERT {9} VALUES ({10})",
      qualified(d.target_schema, d.target_table), page_keys, decode_key_columns(d.key, "p.key"),
      kPageTable, d.source_table_id, sources, key_equal(d.key, "__r", "__k"), on, update,
      target_columns(d, fields), values);
}

std::string range_insert(const TransformDef& d, const std::vector<Field>& chosen) {
  std::vector<Field> fields = with_held(d, chosen);
  return fmt::format("INSERT INTO {} {} {}", qualified(d.target_schema, d.target_table),
                     target_columns(d, fields), range_sources(d, fields));
}

// Upserts the rows of `sources` that differ from the target's and deletes
// the target rows `scope` selects that `sources` lacks: the CTEs
// `<prefix>_src`, `<prefix>_up` and `<prefix>_del`.
std::string rewrite_ctes(const TransformDef& d, const std::vector<Field>& fields,
                         const std::string& sources, const std::string& scope,
                         const std::string& prefix) {
  std::string target = qualified(d.target_schema, d.target_table);
  std::string on_conflict = "DO NOTHING";
  if (!fields.empty())
    on_conflict = fmt::format(
        "DO UPDATE SET {} WHERE {}",
        join<Field>(fields, ", ",
                    [](const Field& f) { return ident(f.name) + " = EXCLUDED." + ident(f.name); }),
        join<Field>(fields, " OR ", [](const Field& f) { return changed_from(f, "EXCLUDED"); }));
  return fmt::format(
      "{7}_src AS MATERIALIZED ({0}), {7}_up AS (INSERT INTO {1} AS __t {2} SELECT * FROM "
      "{7}_src ON CONFLICT {3} {4} RETURNING 1), {7}_del AS (DELETE FROM {1} AS __t WHERE {5} AND "
      "NOT EXISTS (SELECT 1 FROM {7}_src __s WHERE {6}) RETURNING 1)",
      sources, target, target_columns(d, fields), key_tuple(d.target_key(), ""), on_conflict, scope,
      target_key_equal(d, "__s", "__t"), prefix);
}

// The same as one statement returning the counts of rows read, upserted and
// deleted.
std::string rewrite(const TransformDef& d, const std::vector<Field>& fields,
                    const std::string& sources, const std::string& scope) {
  return fmt::format(
      "WITH {} SELECT (SELECT count(*) FROM __trellis_src), (SELECT count(*) FROM __trellis_up), "
      "(SELECT count(*) FROM __trellis_del)",
      rewrite_ctes(d, fields, sources, scope, "__trellis"));
}

// The target rows of the build range ($1, $2] (NULL: an open end).
std::string range_scope(const TransformDef& d) {
  return fmt::format("($1::text[] IS NULL OR {}) AND ($2::text[] IS NULL OR {})",
                     key_after(d.key, "__t", "$1::text[]"),
                     key_at_most(d.key, "__t", "$2::text[]"));
}

std::string range_rewrite(const TransformDef& d, const std::vector<Field>& chosen) {
  std::vector<Field> fields = with_held(d, chosen);
  return rewrite(d, fields, range_sources(d, fields), range_scope(d));
}

// The rows a re-derive of the page's keys writes (`sources`) and the target
// rows it may delete (`scope`, over `__t`). A transform without a join that
// fans out covers every source key of the page.
struct PageRewrite {
  std::string sources;
  std::string scope;
};
PageRewrite page_rewrite(const TransformDef& d, const std::vector<Field>& fields) {
  std::string alias = ident(d.alias);
  std::string where = where_filter(d);
  std::string select = source_select(d, fields);
  std::string target = qualified(d.target_schema, d.target_table);
  if (!d.fans_out()) {
    std::string keys =
        fmt::format("(SELECT DISTINCT {} FROM {} p WHERE p.tbl = {})",
                    decode_key_columns(d.key, "p.key"), kPageTable, d.source_table_id);
    return {fmt::format("{} WHERE {} IN {}{}", select, key_tuple(d.key, alias), keys, where),
            fmt::format("{} IN {}", key_tuple(d.key, "__t"), keys)};
  }
  std::vector<std::string> sources = {
      fmt::format("{} WHERE {} IN {}{}", select, key_tuple(d.key, alias), whole_roots(d), where)};
  std::vector<std::string> scope = {fmt::format("SELECT __r.ctid FROM {} __r WHERE {} IN {}",
                                                target, key_tuple(d.key, "__r"), whole_roots(d))};
  for (const auto& part : fanned_parts(d, d.fan_key(), "__r")) {
    sources.push_back(per_pair(part.drive, fmt::format("{} WHERE {}{}", select, part.live, where)));
    scope.push_back(per_pair(
        part.drive, fmt::format("SELECT __r.ctid FROM {} __r WHERE {}", target, part.held)));
  }
  std::string all =
      join<std::string>(sources, " UNION ALL ", [](const std::string& s) { return s; });
  // Two fanning joins' pairs may reach one row twice.
  if (d.fanning_joins() > 1)
    all = fmt::format("SELECT DISTINCT ON {} * FROM ({}) __u", key_tuple(d.target_key(), ""), all);
  // The rows in scope are deleted through their row ids (a TID scan), not
  // by a hash join over the whole target.
  return {all, "__t.ctid = ANY (ARRAY(" +
                   join<std::string>(scope, " UNION ALL ", [](const std::string& s) { return s; }) +
                   "))"};
}

// The re-derive when a join fans out: a source key has any number of
// target rows, so the page's keys are rewritten as a range is (their
// current rows upserted, their target rows that no longer match deleted).
// A whole source key covers all its rows; a partial one only the rows of its
// pairs (source key, key of fanning join j), and, when j is a LEFT JOIN,
// the row the source key has without a match of j, which a pair may bring
// or end. Each part reads the tables and the target through their keys.
std::string fanned_derive(const TransformDef& d, const std::vector<Field>& chosen) {
  std::vector<Field> fields = with_held(d, chosen);
  auto page = page_rewrite(d, fields);
  return rewrite(d, fields, page.sources, page.scope);
}

// The source key ending the next build range (or keyset chunk) of about
// $2 rows past $1, counted over the join when it fans out: a range then
// writes about $2 target rows whatever the fan-out, so its transaction stays
// short (a source key's rows are never split: one key with more rows is one
// range). A long range would also hold back the promotion of every segment
// sealed meanwhile (data path step 4), and so every target's freshness.
std::string fanned_chunk_bound(const TransformDef& d) {
  return chunk_bound_over(d.key, d.from_clause(), ident(d.alias));
}

}  // namespace

HeldRows one_to_one_held_rows(const TransformDef& d) {
  auto fan = d.fan_key();
  for (const auto& h : d.held_key()) fan.push_back(h);
  return {qualified(d.target_schema, d.target_table), fan};
}

OneToOneWrites one_to_one_writes(const TransformDef& d, const std::string& prefix) {
  std::vector<Field> fields = with_held(d, {});
  auto page = page_rewrite(d, fields);
  return {rewrite_ctes(d, fields, page.sources, page.scope, prefix),
          fmt::format("{}_ins AS (INSERT INTO {} {} {})", prefix,
                      qualified(d.target_schema, d.target_table), target_columns(d, fields),
                      range_sources(d, fields)),
          rewrite_ctes(d, fields, range_sources(d, fields), range_scope(d), prefix)};
}

TransformSql compile_one_to_one(const TransformDef& d) {
  TransformSql sql;
  std::string target = qualified(d.target_schema, d.target_table);
  std::string source = qualified(d.source_schema, d.source_table);
  sql.create = {create_target(d)};
  for (auto& index : fan_indexes(target, d.fan_key())) sql.create.push_back(std::move(index));
  for (auto& index : fan_indexes(target, d.held_key())) sql.create.push_back(std::move(index));
  sql.drop = {"DROP TABLE IF EXISTS " + target};
  sql.steps = {lock_key_slots(d), derive(d, written_fields(d))};
  sql.build_steps = sql.steps;
  sql.map_joined_keys = map_joined_keys(d, one_to_one_held_rows(d));
  sql.page_all_held_keys = page_all_keys(d, target);
  sql.held_keys_from = target;
  sql.page_all_source_keys = page_all_keys(d, qualified(d.source_schema, d.source_table));
  sql.source_chunk_bound = d.fans_out() ? fanned_chunk_bound(d) : chunk_bound(d.key, source);
  sql.sweep_chunk_bound = chunk_bound(d.key, target);
  sql.page_source_range = page_range(d, source);
  sql.page_sweep_range = page_range(d, target);
  sql.range_insert = range_insert(d, written_fields(d));
  sql.range_rewrite = range_rewrite(d, written_fields(d));
  std::string where = d.where_sql ? " WHERE (" + *d.where_sql + ")" : "";
  sql.oracle_select = source_select(d, with_held(d, d.fields)) + where;
  return sql;
}

std::vector<std::string> one_to_one_field_build_steps(const TransformDef& d,
                                                      const std::vector<std::string>& fields) {
  std::vector<Field> chosen;
  for (const auto& f : written_fields(d))
    if (std::find(fields.begin(), fields.end(), f.name) != fields.end()) chosen.push_back(f);
  std::string update = fmt::format(
      "WITH __trellis_keys AS ({}), __trellis_src AS ({}), __trellis_upd AS ({}) SELECT (SELECT "
      "count(*) FROM __trellis_upd), 0",
      page_keys_cte(d), page_sources(d, chosen), update_fields(d, chosen));
  return {lock_key_slots(d), update};
}

std::vector<std::string> one_to_one_steps_for(const TransformDef& d,
                                              const std::vector<std::string>& fields) {
  std::vector<Field> chosen;
  for (const auto& f : d.fields)
    if (std::find(fields.begin(), fields.end(), f.name) != fields.end()) chosen.push_back(f);
  return {lock_key_slots(d), derive(d, chosen)};
}

std::string alter_target_columns(const TransformDef& d, const std::vector<std::string>& dropped,
                                 const std::vector<std::string>& added) {
  std::vector<std::string> actions;
  for (const auto& name : dropped) actions.push_back("DROP COLUMN " + ident(name));
  for (const auto& name : added)
    for (const auto& f : d.fields)
      if (f.name == name) actions.push_back("ADD COLUMN " + column_ddl(f.column, false));
  return fmt::format("ALTER TABLE {} {}", qualified(d.target_schema, d.target_table),
                     join<std::string>(actions, ", ", [](const std::string& a) { return a; }));
}

}  // namespace trellis::compile
