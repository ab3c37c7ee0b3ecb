// Shared SQL fragments; see shared_sql.hpp.
#include "compile/shared_sql.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/sql_text.hpp"
#include "catalog/ring_geometry.hpp"
#include "compile/key_codec.hpp"
#include "compile/rejected_matches.hpp"
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
      // No index: a btree over text[] keys costs more per inserted key than
      // the rest of the page fill; writers that could add a key twice add
      // only the keys the page lacks, and readers match keys with semi-joins.
      "CREATE TEMP TABLE IF NOT EXISTS trellis_page (tbl int NOT NULL, key text[] NOT NULL, mapped "
      "bool) ON COMMIT DELETE ROWS",
      // No index either: a page records each touched group once per transform (the rows come
      // from one GROUP BY or UNION), and every reader takes all of a transform's rows.
      // `emptied` rows are the groups a state-only fold brought to no members.
      "CREATE TEMP TABLE IF NOT EXISTS trellis_groups (tid int NOT NULL, grp text NOT NULL, "
      "delta numeric[], emptied bool NOT NULL DEFAULT false) ON COMMIT DELETE ROWS",
      "CREATE TEMP TABLE IF NOT EXISTS trellis_fan_pairs (tid int NOT NULL, jidx int NOT NULL, "
      "root text[] NOT NULL, fan text[] NOT NULL) ON COMMIT DELETE ROWS",
      "CREATE TEMP TABLE IF NOT EXISTS trellis_whole_roots (tid int NOT NULL, root text[] NOT "
      "NULL) ON COMMIT DELETE ROWS",
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

std::vector<Column> fanned_key(const std::vector<Column>& key,
                               const std::vector<catalog::TransformDef::FanColumn>& fan) {
  std::vector<Column> out = key;
  for (const auto& f : fan) out.push_back(f.column);
  return out;
}

bool any_nullable(const std::vector<catalog::TransformDef::FanColumn>& fan) {
  return std::any_of(fan.begin(), fan.end(), [](const auto& f) { return f.nullable; });
}

std::string fanned_key_constraint(const std::vector<Column>& key,
                                  const std::vector<catalog::TransformDef::FanColumn>& fan) {
  return (any_nullable(fan) ? "UNIQUE NULLS NOT DISTINCT " : "PRIMARY KEY ") +
         key_tuple(fanned_key(key, fan), "");
}

std::vector<std::string> fan_indexes(const std::string& table,
                                     const std::vector<catalog::TransformDef::FanColumn>& fan) {
  std::vector<std::string> out;
  for (size_t i = 0; i < fan.size();) {
    std::vector<Column> cols;
    size_t j = i;
    for (; j < fan.size() && fan[j].alias == fan[i].alias; ++j) cols.push_back(fan[j].column);
    out.push_back(fmt::format("CREATE INDEX ON {} {}", table, key_tuple(cols, "")));
    i = j;
  }
  return out;
}

std::string fanned_key_equal(const std::vector<Column>& key,
                             const std::vector<catalog::TransformDef::FanColumn>& fan,
                             const std::string& a, const std::string& b) {
  std::string out = key_equal(key, a, b);
  for (const auto& f : fan)
    out += f.nullable
               ? fmt::format(" AND ARRAY[{0}.{2}] = ARRAY[{1}.{2}]", a, b, ident(f.column.name))
               : fmt::format(" AND {0}.{2} = {1}.{2}", a, b, ident(f.column.name));
  return out;
}

// The inner SELECT reads only the key columns, so the rows OFFSET skips are
// not encoded (an index-only scan where the visibility map allows).
std::string chunk_bound_over(const std::vector<Column>& key, const std::string& from,
                             const std::string& alias) {
  std::string cols =
      join<Column>(key, ", ", [&](const Column& c) { return alias + "." + ident(c.name); });
  return fmt::format(
      "SELECT {} FROM (SELECT {} FROM {} WHERE $1::text[] IS NULL OR {} ORDER BY {} OFFSET "
      "$2::int - 1 LIMIT 1) AS __r",
      encode_key(key, "__r"), cols, from, key_after(key, alias, "$1::text[]"), cols);
}

std::string chunk_bound(const std::vector<Column>& key, const std::string& table) {
  return chunk_bound_over(key, table + " AS __r", "__r");
}

std::string page_lacks(const std::string& table_expr, const std::string& key_expr) {
  return fmt::format("NOT EXISTS (SELECT 1 FROM {} __p WHERE __p.tbl = {} AND __p.key = {})",
                     kPageTable, table_expr, key_expr);
}

namespace {

// INSERT into the page of `table`'s keys (as `d`'s source table's) that the
// page lacks, from the rows `where` keeps.
std::string page_insert(const TransformDef& d, const std::string& table, const std::string& where) {
  std::string key = encode_key(d.key, "__r");
  // A target or ledger whose join fans out holds a source key in several
  // rows.
  bool distinct = d.fans_out() && table != qualified(d.source_schema, d.source_table);
  return fmt::format(
      "INSERT INTO {} (tbl, key) SELECT {}, __e.key FROM (SELECT {}{} AS key FROM {} AS __r{}) "
      "__e WHERE {}",
      kPageTable, d.source_table_id, distinct ? "DISTINCT " : "", key, table, where,
      page_lacks(std::to_string(d.source_table_id), "__e.key"));
}

}  // namespace

std::string page_range(const TransformDef& d, const std::string& table) {
  return page_insert(
      d, table,
      fmt::format(" WHERE ($1::text[] IS NULL OR {}) AND ($2::text[] IS NULL OR {})",
                  key_after(d.key, "__r", "$1::text[]"), key_at_most(d.key, "__r", "$2::text[]")));
}

std::string page_all_keys(const TransformDef& d, const std::string& table) {
  return page_insert(d, table, "");
}

// Whether the page row `p` (of the source) is a key d re-derives whole: put
// in the page directly, or reached by one of d's other mappings
// (transform_sql.hpp, kWholeRootsTable).
std::string whole_for(const TransformDef& d, const std::string& p) {
  return fmt::format(
      "({0}.mapped IS NULL OR EXISTS (SELECT 1 FROM {1} w WHERE w.tid = {2} AND w.root = {0}.key))",
      p, kWholeRootsTable, d.id);
}

// The page's source keys d re-derives whole.
std::string whole_roots(const TransformDef& d) {
  return fmt::format("(SELECT {} FROM {} p WHERE p.tbl = {} AND {})",
                     decode_key_columns(d.key, "p.key"), kPageTable, d.source_table_id,
                     whole_for(d, "p"));
}

// The (source key, key of fanning join i) pairs of the source keys in the
// page that d does not re-derive whole (a bisection may have set one aside;
// a whole one covers its pairs already), decoded as the source key's columns
// and then `fan` (that join's key columns under any names); with
// `roots_only`, the distinct source keys alone. The page's partial keys are
// read once into a hash ("IS TRUE" keeps the IN a hashed subplan: pulled up
// into a semi join, the pairs table's missing statistics made it a nested
// loop that scanned the page once per pair).
std::string join_pairs(const TransformDef& d, size_t i, const std::vector<Column>& fan,
                       bool roots_only) {
  return fmt::format(
      "(SELECT {}{}{} FROM {} q WHERE q.tid = {} AND q.jidx = {} AND (q.root IN (SELECT p.key "
      "FROM {} p WHERE p.tbl = {} AND NOT {})) IS TRUE)",
      roots_only ? "DISTINCT " : "", decode_key_columns(d.key, "q.root"),
      roots_only ? "" : ", " + decode_key_columns(fan, "q.fan"), kFanPairsTable, d.id, i,
      kPageTable, d.source_table_id, whole_for(d, "p"));
}

std::vector<FannedPart> fanned_parts(const TransformDef& d,
                                     const std::vector<TransformDef::FanColumn>& held_fan,
                                     const std::string& held) {
  std::vector<FannedPart> out;
  std::string root_is_pair = key_equal(d.key, ident(d.alias), "__p");
  std::string held_root_is_pair = key_equal(d.key, held, "__p");
  for (size_t i = 0; i < d.joins.size(); ++i) {
    const auto& j = d.joins[i];
    if (!j.fans) continue;
    std::vector<Column> cols;
    for (const auto& f : held_fan)
      if (f.alias == j.alias) cols.push_back(f.column);
    std::string fan_is_pair, held_fan_is_pair;
    for (size_t k = 0; k < cols.size(); ++k) {
      fan_is_pair += fmt::format(" AND {}.{} = __p.{}", ident(j.alias), ident(j.key[k].name),
                                 ident(cols[k].name));
      held_fan_is_pair += fmt::format(" AND {0}.{1} = __p.{1}", held, ident(cols[k].name));
    }
    out.push_back({join_pairs(d, i, cols, false), root_is_pair + fan_is_pair,
                   held_root_is_pair + held_fan_is_pair});
    if (!j.left_outer) continue;
    // Without a match every column of j is NULL, and with one its ON
    // columns equal non-NULL values: testing one of them lets PostgreSQL
    // plan an anti join, which stops at the key's first match instead of
    // reading every match to find none is missing (its key is not in the ON).
    out.push_back(
        {join_pairs(d, i, cols, true),
         fmt::format("{} AND {}.{} IS NULL", root_is_pair, ident(j.alias),
                     ident(j.on.front().column)),
         fmt::format("{} AND {}.{} IS NULL", held_root_is_pair, held, ident(cols.front().name))});
  }
  return out;
}

std::string per_pair(const std::string& drive, const std::string& rows) {
  return fmt::format("SELECT __x.* FROM {} __p CROSS JOIN LATERAL ({}) __x", drive, rows);
}

static_assert(catalog::kRingBuckets <= 256, "a key slot lock holds the slot in 8 bits");

std::string lock_key_slots(const TransformDef& d) {
  // The lock's key: a fixed tag in the high half (so it is unlikely to be an
  // application's advisory lock), the transform and the slot below it.
  int64_t base = key_slot_lock_base(d.id);
  return fmt::format(
      "SELECT pg_advisory_xact_lock({} + __s.slot) FROM (SELECT DISTINCT {} AS slot FROM {} p "
      "WHERE p.tbl = {}) __s ORDER BY __s.slot",
      base, page_key_slot(), kPageTable, d.source_table_id);
}

std::string page_key_slot() {
  return key_bucket("p.key", catalog::kRingBuckets);
}

std::string lock_rows(const std::string& table, const std::vector<Column>& cols,
                      const std::string& conflict_target, const std::string& rows_sql) {
  std::string order;
  for (size_t i = 0; i < cols.size(); ++i) order += (i ? ", " : "") + std::to_string(i + 1);
  return fmt::format(
      "INSERT INTO {} AS __t {} {} ORDER BY {} ON CONFLICT {} DO UPDATE SET {} = EXCLUDED.{} "
      "WHERE false",
      table, key_tuple(cols, ""), rows_sql, order, conflict_target, ident(cols[0].name),
      ident(cols[0].name));
}

TransformSql compile_aggregate(const TransformDef& def);
TransformSql compile_one_to_one(const TransformDef& def);

TransformSql compile_transform(const TransformDef& def) {
  bool aggregate = def.shape == catalog::Shape::aggregate;
  TransformSql sql = aggregate ? compile_aggregate(def) : compile_one_to_one(def);
  if (aggregate)
    sql.analyze.push_back("ANALYZE " + qualified(def.target_schema, def.ledger_table()));
  sql.analyze.push_back("ANALYZE " + qualified(def.target_schema, def.target_table));
  if (!def.fans_out())
    sql.page_key_beyond_frontier =
        "(__f.cursor IS NULL OR " + encoded_key_after(def.key, "p.key", "__f.cursor") + ")";
  add_rejected_matches(
      def, qualified(def.target_schema, aggregate ? def.ledger_table() : def.target_table), sql);
  return sql;
}

}  // namespace trellis::compile
