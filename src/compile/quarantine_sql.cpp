// Quarantine statements; see quarantine_sql.hpp. Keys are the ring's
// encoding (text[] of each key column's JSON text); users see and give them
// as JSON arrays of those texts, and a single-column key may be given as a
// bare JSON scalar.
#include "compile/quarantine_sql.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "catalog/transitions.hpp"
#include "compile/shared_sql.hpp"
#include "compile/transform_sql.hpp"

namespace trellis::compile {

using base::qualified;
using catalog::bump_version;
using catalog::from_condition;
using catalog::Operation;
using catalog::transition;

namespace {

constexpr const char* kHidden = "pg_temp.trellis_hidden";
constexpr const char* kSaved = "pg_temp.trellis_page_saved";

// text[] from a JSON array of key values (or a bare scalar).
std::string key_from_json(const std::string& param) {
  return fmt::format(
      "(SELECT array_agg(__e.v #>> '{{}}' ORDER BY __e.n) FROM jsonb_array_elements(CASE WHEN "
      "jsonb_typeof({0}::jsonb) = 'array' THEN {0}::jsonb ELSE jsonb_build_array({0}::jsonb) END) "
      "WITH ORDINALITY AS __e (v, n))",
      param);
}

}  // namespace

QuarantineSql compile_quarantine(const std::string& cs) {
  QuarantineSql q;
  std::string held = qualified(cs, "held_keys");
  std::string transforms = qualified(cs, "transforms");
  q.hide_held_keys = fmt::format(
      "WITH __moved AS (DELETE FROM {0} p USING {1} h WHERE h.transform_id = $1::int AND h.held "
      "AND h.tbl = p.tbl AND h.key = p.key RETURNING p.tbl, p.key) INSERT INTO {2} (tbl, key) "
      "SELECT tbl, key FROM __moved",
      kPageTable, held, kHidden);
  q.restore_hidden_keys = fmt::format(
      "WITH __back AS (DELETE FROM {0} RETURNING tbl, key) INSERT INTO {1} (tbl, key) SELECT "
      "__b.tbl, __b.key FROM __back __b WHERE {2}",
      kHidden, kPageTable, page_lacks("__b.tbl", "__b.key"));
  q.save_page = fmt::format(
      "INSERT INTO {} (tbl, key, n) SELECT tbl, key, row_number() OVER (PARTITION BY tbl ORDER BY "
      "key) - 1 FROM {}",
      kSaved, kPageTable);
  q.count_saved = fmt::format("SELECT count(*) FROM {} WHERE tbl = $1::int", kSaved);
  q.clear_table_keys = fmt::format("DELETE FROM {} WHERE tbl = $1::int", kPageTable);
  q.fill_saved_range = fmt::format(
      "INSERT INTO {} (tbl, key) SELECT tbl, key FROM {} WHERE tbl = $1::int AND n >= $2::bigint "
      "AND n < $3::bigint",
      kPageTable, kSaved);
  q.saved_key = fmt::format("SELECT key FROM {} WHERE tbl = $1::int AND n = $2::bigint", kSaved);
  q.charge = fmt::format(
      "INSERT INTO {0} AS h (transform_id, tbl, key, seg, error, sqlstate, column_name, held, "
      "held_at) VALUES ($1::int, $2::int, $3::text[], $4::bigint, $5, $6, $7::text, {1} <= 1, CASE "
      "WHEN {1} <= 1 THEN now() END) ON CONFLICT (transform_id, tbl, key) DO UPDATE SET charges = "
      "h.charges + 1, error = EXCLUDED.error, sqlstate = EXCLUDED.sqlstate, column_name = "
      "EXCLUDED.column_name, seg = coalesce(EXCLUDED.seg, h.seg), "
      "held = h.held OR h.charges + 1 >= {1}, held_at = CASE WHEN h.held THEN h.held_at WHEN "
      "h.charges + 1 >= {1} THEN now() END RETURNING held, charges",
      held, kChargesToHold);
  q.lock_transform = fmt::format(
      "SELECT target_schema || '.' || target_table FROM {} WHERE id = $1::int FOR NO "
      "KEY UPDATE",
      transforms);
  q.trip_fuse = fmt::format(
      "UPDATE {} SET {} WHERE id = $1::int AND {} AND (SELECT count(*) FROM {} WHERE "
      "transform_id = $1::int AND held AND column_name IS NULL) >= {} RETURNING 1",
      transforms, transition(Operation::quarantine).set, from_condition(Operation::quarantine),
      held, kHeldKeysToTrip);
  q.trip_column_fuse = fmt::format(
      "WITH tripped AS (SELECT 1 WHERE (SELECT count(*) FROM {1} WHERE transform_id = $1::int AND "
      "held AND column_name = $2::text) >= {2}), let_go AS (UPDATE {1} h SET held = false, "
      "charges = 0 FROM tripped WHERE h.transform_id = $1::int AND h.column_name = $2::text "
      "RETURNING 1) UPDATE {0} SET paused_columns = paused_columns || jsonb_build_object($2::text, "
      "jsonb_build_object('since', now()::text, 'reason', 'quarantine', 'error', $3::text, "
      "'sqlstate', $4::text)), {6}, {3} FROM tripped WHERE id = $1::int AND "
      "{4} AND shape = {5} RETURNING (SELECT count(*) FROM let_go)",
      transforms, held, kHeldKeysToTrip, transition(Operation::rebuild_in_place).set,
      from_condition(Operation::rebuild_in_place), catalog::literal(catalog::Shape::one_to_one),
      bump_version());
  q.clear_column =
      fmt::format("DELETE FROM {} WHERE transform_id = $1::int AND column_name = $2::text", held);
  q.halt = fmt::format(
      "WITH RECURSIVE down(id, upstream) AS (SELECT $1::int, NULL::text UNION SELECT r.id, "
      "u.target_schema || '.' || u.target_table FROM down JOIN {0} u ON u.id = down.id JOIN {1} c "
      "ON c.table_schema = u.target_schema AND c.table_name = u.target_table JOIN {0} r ON "
      "r.source_table_id = c.id) UPDATE {0} t SET {2}, capture_failure = "
      "jsonb_build_object('kind', {3}, 'table', (SELECT c.table_schema || '.' || c.table_name "
      "FROM {1} c WHERE c.id = "
      "t.source_table_id), 'columns', '[]'::jsonb, 'error', CASE WHEN down.upstream IS NULL THEN "
      "$2::text ELSE 'upstream transform ' || down.upstream || ' halted: ' || $2::text END, "
      "'sqlstate', $3::text, 'detected_at', now()::text) FROM down WHERE t.id = down.id AND "
      "{4} RETURNING t.target_schema || '.' || t.target_table",
      transforms, qualified(cs, "captured_tables"), transition(Operation::halt).set,
      catalog::literal(catalog::FailureKind::halt), from_condition(Operation::halt, "t"));
  q.sample = fmt::format(
      "SELECT c.table_schema || '.' || c.table_name, to_jsonb(h.key)::text, h.charges, h.error, "
      "h.sqlstate, h.held_at::text, to_jsonb(ARRAY[h.tbl::text] || h.key)::text FROM {0} h JOIN "
      "{1} c ON c.id = h.tbl WHERE h.transform_id = $1::int AND (CASE WHEN $4::text IS NULL "
      "THEN h.held ELSE h.column_name = $4::text END) AND ($3::text = '' OR "
      "ARRAY[h.tbl::text] || h.key > {2}) ORDER BY ARRAY[h.tbl::text] || h.key LIMIT $2::int",
      held, qualified(cs, "captured_tables"), key_from_json("nullif($3::text, '')"));
  q.lock_held = fmt::format(
      "SELECT key FROM {} WHERE transform_id = $1::int AND tbl = $2::int AND held AND key = {} "
      "FOR UPDATE",
      held, key_from_json("$3::text"));
  q.put_key_in_page =
      fmt::format("INSERT INTO {} (tbl, key) VALUES ($1::int, $2::text[])", kPageTable);
  q.release = fmt::format(
      "DELETE FROM {} WHERE transform_id = $1::int AND tbl = $2::int AND key = $3::text[]", held);
  q.record_failure = fmt::format(
      "UPDATE {} SET error = $4, sqlstate = $5 WHERE transform_id = $1::int AND tbl = $2::int AND "
      "key = $3::text[]",
      held);
  q.clear_transform = fmt::format("DELETE FROM {} WHERE transform_id = $1::int", held);
  return q;
}

}  // namespace trellis::compile
