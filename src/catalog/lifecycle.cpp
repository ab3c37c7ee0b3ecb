// The catalog's writers of transform rows (lifecycle.hpp). Each status
// change takes its SET list and its from-statuses from transitions.hpp.
#include "catalog/lifecycle.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "catalog/claims.hpp"
#include "catalog/range_claims.hpp"
#include "catalog/transitions.hpp"
#include "pg/arrays.hpp"

namespace trellis::catalog {

namespace {

// A changed transforms row's target as the event log names it.
constexpr std::string_view kTargetName = "target_schema || '.' || target_table";

// The first column of every row of `r`.
std::vector<std::string> column_of(const pg::Result& r) {
  std::vector<std::string> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(r.get(i, 0));
  return out;
}

// The transforms row `row` is one of the `covered` definitions (parameters
// $n ids and $n+1 versions, pairwise): the same transform at the same version.
std::string is_covered(const std::string& row, int n) {
  return fmt::format(
      "EXISTS (SELECT 1 FROM unnest(${0}::int[], ${1}::int[]) AS __c (id, version) WHERE __c.id = "
      "{2}.id AND __c.version = {2}.version)",
      n, n + 1, row);
}

// A build a drain thread may work on: backfilling and past awaiting capture.
std::string building(const std::string& prefix) {
  return fmt::format("{0}status = {1} AND {0}build_phase IS DISTINCT FROM {2}", prefix,
                     literal(Status::backfilling), literal(BuildPhase::awaiting_capture));
}

// No worker transaction other than this one that began before the fence of
// transforms row `row` is still open (`workers`: the registered worker
// backends). Such a transaction may have read the catalog row before the
// change the fence follows, and may still write as it said.
std::string fence_passed(const std::string& row, const std::string& workers) {
  return fmt::format("({0}.build_fence IS NOT NULL AND {1})", row,
                     no_worker_transaction_before(row + ".build_fence", workers));
}

// A new version of the definition (and the time of the change).
std::string bumped() {
  return std::string(bump_version()) + ", updated_at = now()";
}

std::string awaiting_capture() {
  return "status = " + literal(Status::backfilling) +
         " AND build_phase = " + literal(BuildPhase::awaiting_capture);
}

// The transforms waiting for capture of a table: built, or building fields,
// once capture is in place (not those waiting for an upstream).
std::string waiting_for_capture(const std::string& waits_for_upstream) {
  return fmt::format("((status = {} AND NOT {}) OR build_phase = {})",
                     literal(Status::waiting_to_backfill), waits_for_upstream,
                     literal(BuildPhase::awaiting_capture));
}

}  // namespace

void Versions::add(const TransformDef& def) {
  ids.push_back(def.id);
  versions.push_back(def.version);
}

Lifecycle::Lifecycle(const Store& store)
    : transforms_(store.table("transforms")),
      captured_tables_(store.table("captured_tables")),
      held_keys_(store.table("held_keys")),
      parked_keys_(store.table("parked_keys")),
      range_frontiers_(store.table("range_frontiers")),
      workers_(store.table("workers")),
      not_claimed_by_ranges_(not_claimed_by_ranges(store, "c")),
      range_candidates_(range_claim_statements(store).candidates),
      waits_for_upstream_(store.waits_for_upstream("t")) {}

void Lifecycle::define(pg::Connection& conn, const TransformDef& def) {
  conn.exec(fmt::format("INSERT INTO {} (target_schema, target_table, source_table_id, shape, "
                        "statement, definition, status, adopted_columns) VALUES ($1, $2, $3::int, "
                        "$4, $5, $6::jsonb, $7, CASE WHEN $8::jsonb IS NOT NULL THEN "
                        "ARRAY(SELECT jsonb_array_elements_text($8::jsonb)) END)",
                        transforms_),
            {def.target_schema, def.target_table, std::to_string(def.source_table_id),
             std::string(name(def.shape)), def.statement, to_json(def).dump(),
             std::string(name(*transition(Operation::define).to)),
             def.adopted ? pg::Param(nlohmann::json(def.adopted_columns).dump()) : pg::Param()});
}

void Lifecycle::pause(pg::Connection& conn, int id) {
  conn.exec(fmt::format("UPDATE {} SET {} WHERE id = $1::int AND {}", transforms_,
                        transition(Operation::pause).set, from_condition(Operation::pause)),
            {std::to_string(id)});
}

bool Lifecycle::pause_on_drift(pg::Connection& conn, int id, const std::string& failure) {
  auto r = conn.exec(
      fmt::format("UPDATE {} SET {}, capture_failure = $2::jsonb || "
                  "jsonb_build_object('detected_at', now()::text) WHERE id = $1::int AND {}",
                  transforms_, transition(Operation::pause_on_drift).set,
                  from_condition(Operation::pause_on_drift)),
      {std::to_string(id), failure});
  return r.affected() > 0;
}

bool Lifecycle::resume(pg::Connection& conn, int id, const TransformDef& fresh) {
  auto r = conn.exec(
      fmt::format("UPDATE {} SET definition = $2::jsonb, {} WHERE id = $1::int AND {}", transforms_,
                  transition(Operation::resume).set, from_condition(Operation::resume)),
      {std::to_string(id), to_json(fresh).dump()});
  return r.affected() > 0;
}

bool Lifecycle::drop(pg::Connection& conn, int id) {
  auto r = conn.exec(fmt::format("DELETE FROM {} WHERE id = $1::int AND {}", transforms_,
                                 from_condition(Operation::drop)),
                     {std::to_string(id)});
  return r.affected() > 0;
}

std::vector<std::string> Lifecycle::rebuild(pg::Connection& conn, const std::vector<int>& ids) {
  if (ids.empty()) return {};
  auto r = conn.exec(fmt::format("UPDATE {} t SET {} WHERE id = ANY($1::int[]) AND {} RETURNING {}",
                                 transforms_, transition(Operation::rebuild_in_place).set,
                                 from_condition(Operation::rebuild_in_place), kTargetName),
                     {pg::int_array(ids)});
  return column_of(r);
}

std::vector<std::string> Lifecycle::rebuild_readers_of(pg::Connection& conn, int table_id) {
  auto r = conn.exec(
      fmt::format("UPDATE {} t SET {} WHERE $1::int = ANY({}) AND {} RETURNING {}", transforms_,
                  transition(Operation::rebuild_in_place).set, read_table_ids("t"),
                  from_condition(Operation::rebuild_in_place), kTargetName),
      {std::to_string(table_id)});
  return column_of(r);
}

void Lifecycle::pause_column(pg::Connection& conn, int id, const std::string& column) {
  conn.exec(
      fmt::format("UPDATE {} SET paused_columns = paused_columns || jsonb_build_object($2::text, "
                  "jsonb_build_object('since', now()::text, 'reason', 'operator')), {} WHERE id = "
                  "$1::int",
                  transforms_, bumped()),
      {std::to_string(id), column});
}

void Lifecycle::resume_column(pg::Connection& conn, int id, const std::string& column) {
  conn.exec(fmt::format("UPDATE {} SET paused_columns = paused_columns - $2::text, {} WHERE id = "
                        "$1::int",
                        transforms_, bumped()),
            {std::to_string(id), column});
}

void Lifecycle::redefine(pg::Connection& conn, int id, const TransformDef& fresh,
                         const std::vector<std::string>& dropped) {
  conn.exec(
      fmt::format("UPDATE {} SET definition = $2::jsonb, statement = $3, paused_columns = "
                  "paused_columns - ARRAY(SELECT jsonb_array_elements_text($4::jsonb)), {} "
                  "WHERE id = $1::int",
                  transforms_, bumped()),
      {std::to_string(id), to_json(fresh).dump(), fresh.statement, nlohmann::json(dropped).dump()});
}

void Lifecycle::widen(pg::Connection& conn, const TransformDef& def, const TransformDef& fresh) {
  conn.exec(fmt::format("UPDATE {} SET definition = $2::jsonb, {} WHERE id = $1::int AND version = "
                        "$3::int",
                        transforms_, bumped()),
            {std::to_string(def.id), to_json(fresh).dump(), std::to_string(def.version)});
  // 22001: too long for the narrower type; 22003: out of its range.
  conn.exec(fmt::format("WITH released AS (DELETE FROM {} WHERE transform_id = $1::int AND "
                        "sqlstate IN ('22001', '22003') RETURNING 1) UPDATE {} SET {} WHERE id "
                        "= $1::int AND {} AND EXISTS (SELECT 1 FROM released)",
                        held_keys_, transforms_, transition(Operation::rebuild_in_place).set,
                        from_condition(Operation::rebuild_in_place)),
            {std::to_string(def.id)});
}

std::optional<EditRow> Lifecycle::lock_for_edit(pg::Connection& conn, int id, int version) {
  auto row = conn.exec(fmt::format("SELECT status, version, array_to_json(build_fields)::text "
                                   "FROM {} WHERE id = $1::int FOR UPDATE",
                                   transforms_),
                       {std::to_string(id)});
  if (row.rows() == 0 || row.get_int(0, 1) != version) return std::nullopt;
  EditRow edit{status_named(row.get(0, 0)), version, std::nullopt};
  if (auto pending = row.get_opt(0, 2))
    edit.pending_fields = nlohmann::json::parse(*pending).get<std::vector<std::string>>();
  return edit;
}

void Lifecycle::start_field_build(pg::Connection& conn, int id,
                                  const std::optional<std::vector<std::string>>& fields) {
  conn.exec(fmt::format("UPDATE {} SET {}, build_fields = CASE WHEN $2::jsonb IS NULL THEN NULL "
                        "ELSE ARRAY(SELECT jsonb_array_elements_text($2::jsonb)) END WHERE id = "
                        "$1::int AND {}",
                        transforms_, transition(Operation::start_field_build).set,
                        from_condition(Operation::start_field_build)),
            {std::to_string(id), fields ? pg::Param{nlohmann::json(*fields).dump()} : pg::Param{}});
}

std::vector<std::string> Lifecycle::start_builds(pg::Connection& conn, int table_id,
                                                 const std::string& qualified,
                                                 const Versions& covered) {
  auto r = conn.exec(
      fmt::format("UPDATE {} t SET {}, build_rows_estimate = greatest((SELECT reltuples FROM "
                  "pg_class WHERE oid = $2::regclass), 0)::bigint WHERE $1::int = ANY({}) AND {} "
                  "AND NOT {} AND {} RETURNING {}",
                  transforms_, transition(Operation::start_build).set, read_table_ids("t"),
                  from_condition(Operation::start_build, "t"), waits_for_upstream_,
                  is_covered("t", 3), kTargetName),
      {std::to_string(table_id), qualified, pg::int_array(covered.ids),
       pg::int_array(covered.versions)});
  return column_of(r);
}

void Lifecycle::fence_field_builds(pg::Connection& conn) {
  conn.exec(
      fmt::format("UPDATE {} SET build_fence = clock_timestamp() WHERE {} AND build_fence IS NULL",
                  transforms_, awaiting_capture()));
}

std::vector<std::string> Lifecycle::start_fenced_field_builds(pg::Connection& conn,
                                                              const Versions& covered) {
  auto r = conn.exec(
      fmt::format(
          "UPDATE {0} t SET build_phase = CASE WHEN build_fields IS NULL THEN {2} ELSE {3} END, "
          "build_sweep_target = build_sweep_target OR build_fields IS NULL, build_fence = NULL, "
          "build_cursor = NULL, build_rows_done = 0, capture_wait = NULL, updated_at = now() "
          "WHERE {4} AND {1} AND {5} RETURNING {6}",
          transforms_, is_covered("t", 1), literal(first_phase()), literal(BuildPhase::fields),
          awaiting_capture(), fence_passed("t", workers_), kTargetName),
      {pg::int_array(covered.ids), pg::int_array(covered.versions)});
  return column_of(r);
}

bool Lifecycle::any_awaiting_capture(pg::Connection& conn) {
  return conn
      .exec(
          fmt::format("SELECT EXISTS (SELECT 1 FROM {} WHERE {})", transforms_, awaiting_capture()))
      .get_bool(0, 0);
}

std::vector<std::string> Lifecycle::record_capture_wait(pg::Connection& conn, int table_id,
                                                        const std::string& table,
                                                        const std::string& qualified) {
  auto r = conn.exec(
      fmt::format(
          "WITH before AS (SELECT t.id, t.capture_wait IS NULL AS fresh FROM {0} t WHERE $1::int "
          "= ANY({1}) AND {2} FOR UPDATE) UPDATE {0} t SET capture_wait = "
          "jsonb_build_object('table', $2::text, 'lock_mode', 'ShareRowExclusiveLock', "
          "'blocking_pids', (SELECT coalesce(jsonb_agg(DISTINCT pid), '[]') FROM pg_locks WHERE "
          "relation = $3::regclass AND granted AND pid <> pg_backend_pid()), 'since', "
          "coalesce(capture_wait->>'since', now()::text)) FROM before WHERE t.id = before.id "
          "RETURNING t.target_schema || '.' || t.target_table, before.fresh",
          transforms_, read_table_ids("t"), waiting_for_capture(waits_for_upstream_)),
      {std::to_string(table_id), table, qualified});
  std::vector<std::string> started;
  for (int i = 0; i < r.rows(); ++i)
    if (r.get_bool(i, 1)) started.push_back(r.get(i, 0));
  return started;
}

void Lifecycle::record_capture_failure(pg::Connection& conn, int table_id, const std::string& table,
                                       const std::string& error) {
  conn.exec(fmt::format("UPDATE {} t SET capture_failure = jsonb_build_object('kind', {}, "
                        "'table', $2::text, 'error', $3::text, 'detected_at', "
                        "coalesce(capture_failure->>'detected_at', now()::text)) "
                        "WHERE $1::int = ANY({}) AND {}",
                        transforms_, literal(FailureKind::capture), read_table_ids("t"),
                        waiting_for_capture(waits_for_upstream_)),
            {std::to_string(table_id), table, error});
}

BuildStatements Lifecycle::build_statements(const std::string& page_table) const {
  BuildStatements s;
  // One statement per idle poll: the claim of a build by keyset chunks (no
  // row claimed: NULLs) and the transforms in a phase by ranges or in their
  // parked phase (work for every thread).
  s.claim = fmt::format(
      "WITH claimed AS (UPDATE {0} t SET (build_owner_pid, build_owner_start) = ({1}) FROM "
      "(SELECT c.id FROM {0} c WHERE {3} AND (c.build_not_before IS NULL OR c.build_not_before <= "
      "now()) AND (c.build_owner_pid IS NULL OR c.build_owner_pid = pg_backend_pid() OR {2}) AND "
      "{4} ORDER BY c.id LIMIT 1 FOR UPDATE SKIP LOCKED) pick WHERE t.id = pick.id RETURNING "
      "t.id, t.build_phase, t.build_cursor, t.build_sweep_target) SELECT c.id, c.build_phase, "
      "c.build_cursor, c.build_sweep_target, (SELECT coalesce(array_agg(r.id), '{{}}') FROM ({5}) "
      "r)::text FROM (SELECT 1) AS one LEFT JOIN claimed c ON true",
      transforms_, kThisBackend, owner_gone("c.build_owner_pid", "c.build_owner_start"),
      building("c."), not_claimed_by_ranges_, range_candidates_);
  s.check = fmt::format(
      "SELECT build_phase, build_cursor, build_sweep_target, array_to_json(build_fields)::text, "
      "build_fence IS NOT NULL, {2} FROM {0} t WHERE id = $1::int AND {1} AND version = $2::int "
      "AND build_owner_pid = pg_backend_pid() FOR NO KEY UPDATE",
      transforms_, building(""), fence_passed("t", workers_));
  s.set_fence = fmt::format(
      "UPDATE {} SET build_fence = clock_timestamp() WHERE id = $1::int AND "
      "build_fence IS NULL",
      transforms_);
  s.fence_passed = fmt::format("SELECT build_fence IS NOT NULL, {} FROM {} t WHERE id = $1::int",
                               fence_passed("t", workers_), transforms_);
  s.holds_keys = fmt::format(
      "SELECT EXISTS (SELECT 1 FROM {} WHERE transform_id = $1::int AND held)", held_keys_);
  s.discharge = fmt::format(
      "WITH picked AS (SELECT tbl, key FROM {0} WHERE transform_id = $1::int ORDER BY tbl, key "
      "LIMIT $2::int), moved AS (DELETE FROM {0} p USING picked WHERE p.transform_id = $1::int AND "
      "p.tbl = picked.tbl AND p.key = picked.key RETURNING p.tbl, p.key) INSERT INTO {1} (tbl, "
      "key) SELECT tbl, key FROM moved",
      parked_keys_, page_table);
  s.discharge_check = fmt::format(
      "SELECT {} FROM {} t WHERE id = $1::int AND version = $2::int AND status = {} AND "
      "build_phase = {} FOR SHARE",
      fence_passed("t", workers_), transforms_, literal(Status::backfilling),
      literal(BuildPhase::parked));
  s.parked_slots = fmt::format(
      "SELECT slot, count(*) FROM {} WHERE transform_id = $1::int GROUP BY slot ORDER BY slot",
      parked_keys_);
  s.claim_parked_slot = "SELECT pg_try_advisory_xact_lock($1::bigint)";
  // In no order: an index scan of the slots that stops at $2 keys, where
  // ORDER BY sorted every key of the slots for each transaction (66 ms a
  // transaction at 10M rows).
  s.discharge_slots = fmt::format(
      "WITH picked AS (SELECT tbl, key FROM {0} WHERE transform_id = $1::int AND slot = ANY "
      "($3::int2[]) LIMIT $2::int FOR UPDATE SKIP LOCKED), moved AS (DELETE "
      "FROM {0} p USING picked WHERE p.transform_id = $1::int AND p.tbl = picked.tbl AND p.key = "
      "picked.key RETURNING p.tbl, p.key) INSERT INTO {1} (tbl, key) SELECT tbl, key FROM moved",
      parked_keys_, page_table);
  s.advance = fmt::format(
      "UPDATE {} SET build_cursor = $2::text[], build_rows_done = build_rows_done + (SELECT "
      "count(*) FROM {}), backfill_failure = NULL WHERE id = $1::int",
      transforms_, page_table);
  s.next_phase = fmt::format(
      "UPDATE {} SET build_phase = $2, build_cursor = NULL, build_fence = NULL WHERE id = $1::int",
      transforms_);
  s.go_live = fmt::format("UPDATE {} SET {} WHERE id = $1::int AND {}", transforms_,
                          transition(Operation::go_live).set, from_condition(Operation::go_live));
  // The backoff doubles per attempt (100 ms .. 5 s).
  s.fail = fmt::format(
      "UPDATE {0} t SET build_owner_pid = NULL, build_owner_start = NULL, build_not_before = "
      "now() + b.wait, backfill_failure = $2::jsonb || jsonb_build_object('attempts', b.attempts "
      "+ 1, 'next_retry_at', (now() + b.wait)::text) FROM (SELECT id, coalesce((backfill_failure "
      "->> 'attempts')::int, 0) AS attempts, least(interval '100 ms' * power(2, least(coalesce("
      "(backfill_failure ->> 'attempts')::int, 0), 6)), interval '5 s') AS wait FROM {0} WHERE id "
      "= $1::int) b WHERE t.id = b.id",
      transforms_);
  s.retry = fmt::format(
      "UPDATE {} SET build_owner_pid = NULL, build_owner_start = NULL, build_not_before = now() + "
      "$3::int * interval '1 ms', backfill_failure = $2::jsonb || jsonb_build_object('attempts', "
      "coalesce((backfill_failure ->> 'attempts')::int, 0) + 1, 'next_retry_at', (now() + $3::int "
      "* interval '1 ms')::text) WHERE id = $1::int",
      transforms_);
  return s;
}

std::string Lifecycle::park_statement(const std::string& page_table,
                                      const std::string& whole_roots_table,
                                      const std::string& page_key_slot,
                                      const std::string& beyond_frontier) const {
  std::string frontier, not_beyond;
  if (!beyond_frontier.empty()) {
    // Only while the source ranges are handed out by claims (not turned
    // over to keyset chunks, the last one not yet claimed): the row a claim
    // advances (FOR UPDATE) and a phase's end deletes.
    frontier = fmt::format(
        "WITH __f AS MATERIALIZED (SELECT fr.cursor FROM {0} fr JOIN {1} t ON t.id = "
        "fr.transform_id WHERE fr.transform_id = $1::int AND t.status = {2} AND t.build_phase = "
        "{3} AND fr.fence = t.build_fence AND NOT fr.at_end AND NOT fr.chunked FOR SHARE OF fr) ",
        range_frontiers_, transforms_, literal(Status::backfilling), literal(BuildPhase::ranges));
    not_beyond = fmt::format(" AND NOT (p.tbl = $2::int AND EXISTS (SELECT 1 FROM __f WHERE {}))",
                             beyond_frontier);
  }
  return fmt::format(
      "{0}INSERT INTO {1} (transform_id, tbl, key, slot) SELECT $1::int, p.tbl, p.key, {2} FROM "
      "{3} p WHERE ((p.tbl = $2::int AND ($3::int[] IS NULL OR p.mapped IS NULL OR EXISTS (SELECT "
      "1 FROM {4} w WHERE w.tid = $1::int AND w.root = p.key))) OR p.tbl = ANY ($3::int[])){5} ON "
      "CONFLICT DO NOTHING",
      frontier, parked_keys_, page_key_slot, page_table, whole_roots_table, not_beyond);
}

DrainFailureStatements Lifecycle::drain_failure_statements() const {
  return {
      fmt::format("UPDATE {} SET drain_failure = jsonb_build_object('table', (SELECT table_schema "
                  "|| '.' || table_name FROM {} WHERE id = source_table_id), 'error', $2::text, "
                  "'sqlstate', $3::text, 'since', coalesce(drain_failure->>'since', "
                  "now()::text), 'attempts', coalesce((drain_failure->>'attempts')::int, 0) + 1) "
                  "WHERE {} && $1::int[] AND {} RETURNING target_schema || '.' || target_table, "
                  "(drain_failure->>'attempts')::int",
                  transforms_, captured_tables_, read_table_ids(), running()),
      fmt::format("UPDATE {} SET drain_failure = NULL WHERE drain_failure IS NOT NULL AND {} && "
                  "$1::int[] RETURNING target_schema || '.' || target_table",
                  transforms_, read_table_ids())};
}

}  // namespace trellis::catalog
