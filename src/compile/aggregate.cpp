// Aggregate re-derive; see aggregate.hpp. Targets carry a hidden "__group"
// (the encoded group key, its primary key: array equality treats NULL
// elements as equal, so NULL groups match by index) next to the declared
// identity UNIQUE NULLS NOT DISTINCT over the group columns. The ledger
// names its copy "__ledger_group", so a ledger keyed by an upstream
// aggregate target's "__group" does not clash. Every field is
// recomputed for each touched group from the ledger, with the user's own
// expression evaluated over the ledger under the source's alias, so results
// are exactly PostgreSQL's for any aggregate.
#include "compile/aggregate.hpp"

#include <fmt/format.h>

#include "compile/key_codec.hpp"
#include "compile/shared_sql.hpp"
#include "compile/sql_text.hpp"

namespace trellis::compile {

using catalog::Column;
using catalog::Field;
using catalog::TransformDef;

namespace {

// Values that GROUP BY puts in one group must encode alike: numerics by
// value (1.0 and 1.00), floats with -0 folded into 0.
std::string canonical_group_value(const Column& c, const std::string& value) {
  if (c.type.rfind("numeric", 0) == 0) return "trim_scale(" + value + ")";
  if (c.type == "double precision" || c.type == "real") return "(" + value + " + 0)";
  return value;
}

}  // namespace

std::string encode_group(const std::vector<Column>& group, const std::string& alias) {
  return "ARRAY[" +
         join<Column>(group, ", ",
                      [&](const Column& c) {
                        return fmt::format("to_jsonb({})::text",
                                           canonical_group_value(c, alias + "." + ident(c.name)));
                      }) +
         "]";
}

namespace {

std::string decode_group(const std::vector<Column>& group, const std::string& array_expr) {
  std::string out;
  for (size_t i = 0; i < group.size(); ++i) {
    std::string elem = fmt::format("({})[{}]", array_expr, i + 1);
    // jsonb_to_record reads any JSON value back into any type: scalars,
    // arrays (JSON arrays), composites (JSON objects) and jsonb itself.
    std::string value = fmt::format(
        "(SELECT __v.x FROM jsonb_to_record(jsonb_build_object('x', {}::jsonb)) AS __v(x {}))",
        elem, group[i].type);
    out += (i ? ", " : "") + value + " AS " + ident(group[i].name);
  }
  return out;
}

std::vector<Column> ledger_columns(const TransformDef& d) {
  std::vector<Column> cols = d.group;
  cols.insert(cols.end(), d.ledger.begin(), d.ledger.end());
  return cols;
}

std::string target(const TransformDef& d) {
  return qualified(d.target_schema, d.target_table);
}
std::string ledger(const TransformDef& d) {
  return qualified(d.target_schema, d.ledger_table());
}

std::vector<std::string> create(const TransformDef& d) {
  std::string cols;
  for (const auto& g : d.group) cols += column_ddl(g, false) + ", ";
  for (const auto& f : d.fields) cols += column_ddl(f.column, false) + ", ";
  std::string ledger_cols;
  for (const auto& k : d.key) ledger_cols += column_ddl(k, true) + ", ";
  for (const auto& c : ledger_columns(d)) ledger_cols += column_ddl(c, false) + ", ";
  return {fmt::format("CREATE TABLE {} ({}\"__group\" text[] NOT NULL PRIMARY KEY, "
                      "UNIQUE NULLS NOT DISTINCT {})",
                      target(d), cols, key_tuple(d.group, "")),
          fmt::format(
              "CREATE TABLE {} ({}\"__ledger_group\" text[], \"__present\" bool NOT NULL DEFAULT "
              "false, PRIMARY KEY {})",
              ledger(d), ledger_cols, key_tuple(d.key, "")),
          fmt::format("CREATE INDEX ON {} (\"__ledger_group\")", ledger(d))};
}

std::string lock_entries(const TransformDef& d) {
  std::string rows = fmt::format("SELECT {} FROM {} p WHERE p.tbl = {}",
                                 decode_key_columns(d.key, "p.key"), kPageTable, d.source_table_id);
  return lock_rows(ledger(d), d.key, key_tuple(d.key, ""), rows);
}

std::string rewrite_entries(const TransformDef& d) {
  std::string alias = ident(d.alias);
  std::vector<Column> stored = d.key;
  for (const auto& c : ledger_columns(d)) stored.push_back(c);
  std::string src_cols = join<Column>(stored, ", ", [&](const Column& c) {
    return alias + "." + ident(c.name) + " AS " + ident(c.name);
  });
  std::string where = d.where_sql ? " AND (" + *d.where_sql + ")" : "";
  std::string src = fmt::format(
      "SELECT {}, {} AS \"__ledger_group\" FROM {} AS {} WHERE {} IN (SELECT {} FROM "
      "__trellis_keys){}",
      src_cols, encode_group(d.group, alias), qualified(d.source_schema, d.source_table), alias,
      key_tuple(d.key, alias),
      join<Column>(d.key, ", ", [](const Column& c) { return ident(c.name); }), where);
  std::string sets;
  for (const auto& c : ledger_columns(d)) sets += ident(c.name) + " = __s." + ident(c.name) + ", ";
  return fmt::format(
      "WITH __trellis_keys AS ({0}), __trellis_src AS ({1}), "
      "__trellis_old AS (SELECT __l.\"__ledger_group\" FROM {2} __l JOIN __trellis_keys __k ON {3} "
      "WHERE __l.\"__present\"), "
      "__trellis_touch AS (INSERT INTO {4} (tid, grp) SELECT {5}, \"__ledger_group\" FROM "
      "__trellis_old "
      "UNION SELECT {5}, \"__ledger_group\" FROM __trellis_src ON CONFLICT DO NOTHING), "
      "__trellis_upd AS (UPDATE {2} __l SET {6}\"__ledger_group\" = __s.\"__ledger_group\", "
      "\"__present\" = "
      "true FROM __trellis_src __s WHERE {7}), "
      "__trellis_del AS (DELETE FROM {2} __l USING __trellis_keys __k WHERE {3} AND NOT EXISTS "
      "(SELECT 1 FROM __trellis_src __s WHERE {7})) SELECT 1",
      page_keys_cte(d), src, ledger(d), key_equal(d.key, "__l", "__k"), kGroupsTable, d.id, sets,
      key_equal(d.key, "__l", "__s"));
}

std::string lock_groups(const TransformDef& d) {
  std::vector<Column> cols = {{"__group", "text[]", "", true}};
  cols.insert(cols.end(), d.group.begin(), d.group.end());
  std::string rows = fmt::format("SELECT g.grp, {} FROM {} g WHERE g.tid = {}",
                                 decode_group(d.group, "g.grp"), kGroupsTable, d.id);
  return lock_rows(target(d), cols, "(\"__group\")", rows);
}

std::string grouped_select(const TransformDef& d, const std::string& from_table,
                           const std::string& filter, bool with_group_key) {
  std::string alias = ident(d.alias);
  std::string cols = join<Column>(d.group, ", ", [&](const Column& c) {
    return alias + "." + ident(c.name) + " AS " + ident(c.name);
  });
  for (const auto& f : d.fields) cols += ", (" + f.sql + ") AS " + ident(f.name);
  std::string group_by =
      join<Column>(d.group, ", ", [&](const Column& c) { return alias + "." + ident(c.name); });
  if (with_group_key) {
    cols = alias + ".\"__ledger_group\" AS \"__group\", " + cols;
    group_by = alias + ".\"__ledger_group\", " + group_by;
  }
  return fmt::format("SELECT {} FROM {} AS {}{} GROUP BY {}", cols, from_table, alias, filter,
                     group_by);
}

std::string recompute(const TransformDef& d) {
  std::string alias = ident(d.alias);
  std::string agg = grouped_select(
      d, ledger(d),
      fmt::format(
          " WHERE {0}.\"__present\" AND {0}.\"__ledger_group\" IN (SELECT grp FROM __trellis_g)",
          alias),
      true);
  std::string update = "SELECT 1 WHERE false";
  if (!d.fields.empty()) {
    std::string sets = join<Field>(
        d.fields, ", ", [](const Field& f) { return ident(f.name) + " = __s." + ident(f.name); });
    update = fmt::format(
        "UPDATE {} AS __t SET {} FROM __trellis_agg __s WHERE __t.\"__group\" = __s.\"__group\" "
        "AND ({}) RETURNING 1",
        target(d), sets, join<Field>(d.fields, " OR ", changed));
  }
  return fmt::format(
      "WITH __trellis_g AS (SELECT grp FROM {0} WHERE tid = {1}), __trellis_agg AS ({2}), "
      "__trellis_upd AS ({3}), __trellis_del AS (DELETE FROM {4} AS __t USING __trellis_g __g "
      "WHERE __t.\"__group\" = __g.grp AND NOT EXISTS (SELECT 1 FROM __trellis_agg __s WHERE "
      "__s.\"__group\" = __t.\"__group\") RETURNING 1) "
      "SELECT (SELECT count(*) FROM __trellis_upd), (SELECT count(*) FROM __trellis_del)",
      kGroupsTable, d.id, agg, update, target(d));
}

}  // namespace

TransformSql compile_aggregate(const TransformDef& d) {
  TransformSql sql;
  std::string source = qualified(d.source_schema, d.source_table);
  sql.create = create(d);
  sql.drop = {"DROP TABLE IF EXISTS " + ledger(d), "DROP TABLE IF EXISTS " + target(d)};
  sql.steps = {lock_entries(d), rewrite_entries(d), lock_groups(d), recompute(d)};
  sql.build_step_count = 2;
  // Groups the ledger holds and groups the target holds (a RESUME may have
  // emptied some): every one is recomputed once.
  std::string all_groups = fmt::format(
      "(SELECT \"__ledger_group\" AS g FROM {} WHERE \"__present\" UNION SELECT \"__group\" "
      "FROM {}) __all",
      ledger(d), target(d));
  sql.group_chunk_bound = fmt::format(
      "SELECT g FROM {} WHERE $1::text[] IS NULL OR g > $1::text[] ORDER BY g OFFSET $2::int - 1 "
      "LIMIT 1",
      all_groups);
  sql.page_group_range = fmt::format(
      "INSERT INTO {} (tid, grp) SELECT {}, g FROM {} WHERE ($1::text[] IS NULL OR g > $1::text[]) "
      "AND ($2::text[] IS NULL OR g <= $2::text[]) ON CONFLICT DO NOTHING",
      kGroupsTable, d.id, all_groups);
  sql.page_all_held_keys = page_all_keys(d, ledger(d));
  sql.source_chunk_bound = chunk_bound(d.key, source);
  sql.sweep_chunk_bound = chunk_bound(d.key, ledger(d));
  sql.page_source_range = page_range(d, source);
  sql.page_sweep_range = page_range(d, ledger(d));
  std::string where = d.where_sql ? " WHERE (" + *d.where_sql + ")" : "";
  sql.oracle_select = grouped_select(d, source, where, false);
  return sql;
}

}  // namespace trellis::compile
