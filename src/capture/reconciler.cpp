// Capture installation. Creating or replacing the trigger functions happens
// under a SHARE ROW EXCLUSIVE lock on the table taken with a 50 ms
// lock_timeout: no writer is in flight with the old triggers once it is held
// (so the build, which starts after this commit, misses nothing), and a
// writer queued behind it waits at most that long (I6). On timeout the wait
// is recorded as capture_wait and retried on the next tick.
#include "capture/reconciler.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <map>

#include "base/sql_text.hpp"
#include "pg/arrays.hpp"
#include "pg/lock_timeout.hpp"
#include "pg/sql_error.hpp"

namespace trellis::capture {

using catalog::Column;

namespace {

// Union of the columns the given transforms read, by name, in name order.
std::vector<Column> union_reads(const std::vector<catalog::TransformDef>& readers) {
  std::map<std::string, Column> by_name;
  for (const auto& d : readers)
    for (const auto& c : d.reads) by_name.emplace(c.name, c);
  std::vector<Column> out;
  for (auto& [name, c] : by_name) out.push_back(c);
  return out;
}

std::string signature_of(const catalog::CapturedTable& t, const std::vector<Column>& reads) {
  nlohmann::json j = {{"v", 1},
                      {"key", catalog::columns_to_json(t.key)},
                      {"reads", catalog::columns_to_json(reads)}};
  return j.dump();
}

// The transforms row `row` is one of the covered definitions (parameters
// $n ids and $n+1 versions, pairwise): the same transform at the same version.
std::string is_covered(const std::string& row, int n) {
  return fmt::format(
      "EXISTS (SELECT 1 FROM unnest(${0}::int[], ${1}::int[]) AS __c (id, version) WHERE __c.id = "
      "{2}.id AND __c.version = {2}.version)",
      n, n + 1, row);
}

}  // namespace

void Reconciler::cover(Covered& covered, const std::vector<catalog::TransformDef>& readers) {
  for (const auto& d : readers) {
    covered.ids.push_back(d.id);
    covered.versions.push_back(d.version);
  }
}

Reconciler::Reconciler(catalog::Store& store, compile::RingShape ring)
    : store_(store), ring_(std::move(ring)) {}

bool Reconciler::reconcile(pg::Connection& conn) {
  // A transform waiting for an upstream that is not live (a reader resumed
  // together with its upstream) counts as no reader yet, as a paused one:
  // capture of the upstream's target follows the others' reads, and once the
  // upstream is live (a status change, so a new fingerprint) the install
  // below moves it to backfilling in the same commit as for a new definition.
  auto defs =
      store_.transforms(conn, "status <> 'paused' AND NOT " + store_.waits_for_upstream("t"));
  if (after_catalog_read_) after_catalog_read_();
  bool started = false;
  bool settled = true;
  // The definitions (id, version) whose reads the installed capture covers.
  // Only these may start a build: a transform defined, resumed or altered
  // after `defs` was read is not covered by what this pass installs, and
  // waits for the next pass.
  Covered covered;
  for (const auto& table : store_.captured_tables(conn)) {
    std::vector<catalog::TransformDef> readers;
    bool waiting = false;
    for (const auto& d : defs)
      if (d.source_table_id == table.id) {
        readers.push_back(d);
        waiting = waiting || d.status == "waiting_to_backfill";
      }
    if (readers.empty()) {
      if (table.installed_signature) settled = uninstall(conn, table) && settled;
      continue;
    }
    if (waiting) settled = false;  // its build starts once the status moved
    auto reads = union_reads(readers);
    std::string signature = signature_of(table, reads);
    if (table.installed_signature == signature && !waiting) {
      cover(covered, readers);
      continue;
    }
    try {
      if (install(conn, table, reads, signature, readers, started))
        cover(covered, readers);
      else
        settled = false;
    } catch (const pg::SqlError& e) {
      if (!conn.healthy()) throw;
      record_failure(conn, table, e.what());  // this table only; the others go on
      settled = false;
    }
  }
  started = start_field_builds(conn, covered) || started;
  bool awaiting =
      conn.exec(fmt::format("SELECT EXISTS (SELECT 1 FROM {} WHERE status = 'backfilling' AND "
                            "build_phase = 'awaiting_capture')",
                            store_.table("transforms")))
          .get_bool(0, 0);
  settled_ = settled && !awaiting;
  return started;
}

// A field build may start once capture covers the fields' reads and every
// drain transaction that began before the ALTER committed has ended (such a
// transaction may still write with the old definition). The fence is a time
// taken after the commit was seen; the build starts when no worker
// transaction older than the fence is open.
bool Reconciler::start_field_builds(pg::Connection& conn, const Covered& covered) {
  std::string transforms = store_.table("transforms");
  conn.exec(
      fmt::format("UPDATE {} SET build_fence = clock_timestamp() WHERE status = "
                  "'backfilling' AND build_phase = 'awaiting_capture' AND build_fence IS "
                  "NULL",
                  transforms));
  auto r = conn.exec(
      fmt::format(
          "UPDATE {0} t SET build_phase = CASE WHEN build_fields IS NULL THEN 'source' ELSE "
          "'fields' END, build_fence = NULL, build_cursor = NULL, build_rows_done = 0, "
          "capture_wait = NULL, updated_at = now() WHERE status = 'backfilling' AND build_phase "
          "= 'awaiting_capture' AND build_fence IS NOT NULL AND {2} "
          "AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a JOIN {1} w ON w.pid = a.pid AND "
          "w.backend_start = a.backend_start WHERE a.pid <> pg_backend_pid() AND a.xact_start < "
          "t.build_fence)",
          transforms, store_.table("workers"), is_covered("t", 1)),
      {pg::int_array(covered.ids), pg::int_array(covered.versions)});
  return r.affected() > 0;
}

bool Reconciler::install(pg::Connection& conn, const catalog::CapturedTable& table,
                         const std::vector<Column>& reads, const std::string& signature,
                         const std::vector<catalog::TransformDef>& readers, bool& started) {
  auto sql = compile::compile_capture(table, reads, ring_);
  std::string qualified = base::qualified(table.schema, table.name);
  Covered mine;
  cover(mine, readers);
  const auto& ids = mine.ids;
  const auto& versions = mine.versions;
  int64_t moved = 0;  // transforms moved to backfilling
  bool installed = pg::try_under_lock_timeout(conn, [&] {
    conn.exec("LOCK TABLE " + qualified + " IN SHARE ROW EXCLUSIVE MODE");
    for (const auto& f : sql.functions) conn.exec(f);
    if (conn.exec(sql.trigger_probe).get_int(0, 0) < 4) {
      for (const auto& d : sql.drop) conn.exec_script(d);
      for (const auto& f : sql.functions) conn.exec(f);
      for (const auto& t : sql.create_triggers) conn.exec_script(t);
    }
    conn.exec(fmt::format("UPDATE {} SET installed_signature = $2, relid = $3::regclass, "
                          "installed_digest = ({}) WHERE id = $1::int",
                          store_.table("captured_tables"), sql.function_digest),
              {std::to_string(table.id), signature, qualified});
    auto begun = conn.exec(
        fmt::format("UPDATE {} t SET status = 'backfilling', build_phase = 'source', build_cursor "
                    "= NULL, build_rows_done = 0, build_rows_estimate = greatest((SELECT "
                    "reltuples FROM pg_class WHERE oid = $2::regclass), 0)::bigint, capture_wait "
                    "= NULL, capture_failure = NULL, updated_at = now() WHERE t.source_table_id = "
                    "$1::int AND t.status = 'waiting_to_backfill' AND NOT {} AND {}",
                    store_.table("transforms"), store_.waits_for_upstream("t"), is_covered("t", 3)),
        {std::to_string(table.id), qualified, pg::int_array(ids), pg::int_array(versions)});
    moved = begun.affected();
  });
  if (!installed) {
    record_wait(conn, table);
    return false;
  }
  spdlog::info("capture installed on {}", qualified);
  started = started || moved > 0;
  return true;
}

void Reconciler::record_wait(pg::Connection& conn, const catalog::CapturedTable& table) {
  std::string qualified = base::qualified(table.schema, table.name);
  conn.exec(
      fmt::format(
          "UPDATE {} t SET capture_wait = jsonb_build_object('table', $2::text, 'lock_mode', "
          "'ShareRowExclusiveLock', 'blocking_pids', (SELECT coalesce(jsonb_agg(DISTINCT pid), "
          "'[]') FROM pg_locks WHERE relation = $3::regclass AND granted AND pid <> "
          "pg_backend_pid()), 'since', coalesce(capture_wait->>'since', now()::text)) "
          "WHERE source_table_id = $1::int AND ((status = 'waiting_to_backfill' AND NOT {}) OR "
          "build_phase = 'awaiting_capture')",
          store_.table("transforms"), store_.waits_for_upstream("t")),
      {std::to_string(table.id), table.schema + "." + table.name, qualified});
}

void Reconciler::record_failure(pg::Connection& conn, const catalog::CapturedTable& table,
                                const std::string& error) {
  spdlog::warn("installing capture on {}.{} failed: {}", table.schema, table.name, error);
  conn.exec(fmt::format("UPDATE {} t SET capture_failure = jsonb_build_object('kind', 'capture', "
                        "'table', $2::text, 'error', $3::text, 'detected_at', "
                        "coalesce(capture_failure->>'detected_at', now()::text)) "
                        "WHERE source_table_id = $1::int AND ((status = 'waiting_to_backfill' "
                        "AND NOT {}) OR build_phase = 'awaiting_capture')",
                        store_.table("transforms"), store_.waits_for_upstream("t")),
            {std::to_string(table.id), table.schema + "." + table.name, error});
}

bool Reconciler::uninstall(pg::Connection& conn, const catalog::CapturedTable& table) {
  // The triggers are on the table capture was installed on, which may have
  // been renamed since (and another table created under the old name).
  catalog::CapturedTable located = table;
  auto where = conn.exec(
      "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
      "WHERE c.oid = $1::oid",
      {std::to_string(table.relid)});
  if (where.rows() > 0) {
    located.schema = where.get(0, 0);
    located.name = where.get(0, 1);
  }
  auto sql = compile::compile_capture(located, {}, ring_);
  try {
    return pg::try_under_lock_timeout(conn, [&] {
      for (const auto& d : sql.drop) conn.exec(d);
      conn.exec(fmt::format("UPDATE {} SET installed_signature = NULL, installed_digest = NULL "
                            "WHERE id = $1::int",
                            store_.table("captured_tables")),
                {std::to_string(table.id)});
    });  // false (a lock not granted): retried next tick
  } catch (const pg::SqlError& e) {
    if (!conn.healthy()) throw;
    if (!pg::is_undefined_table(e))  // retried next tick
      spdlog::warn("removing capture from {}.{} failed: {}", located.schema, located.name,
                   e.what());
    return false;
  }
}

}  // namespace trellis::capture
