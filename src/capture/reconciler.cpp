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
#include <set>

#include "base/event_log.hpp"
#include "base/process_metrics.hpp"
#include "base/sql_text.hpp"
#include "bind/table_description.hpp"
#include "capture/layout.hpp"
#include "capture/move_guard.hpp"
#include "capture/trigger_install.hpp"
#include "pg/arrays.hpp"
#include "pg/lock_timeout.hpp"
#include "pg/sql_error.hpp"

namespace trellis::capture {

using catalog::Column;

void Reconciler::cover(Covered& covered, const std::vector<catalog::TransformDef>& readers) {
  for (const auto& d : readers) covered.add(d);
}

Reconciler::Reconciler(catalog::Store& store, compile::RingShape ring)
    : store_(store), lifecycle_(store), ring_(ring), partitions_(store, std::move(ring)) {}

bool Reconciler::reconcile(pg::Connection& conn) {
  // A transform waiting for an upstream that is not live (a reader resumed
  // together with its upstream) counts as no reader yet, as a paused one:
  // capture of the upstream's target follows the others' reads, and once the
  // upstream is live (a status change, so a new fingerprint) the install
  // below moves it to backfilling in the same commit as for a new definition.
  auto defs = store_.capture_readers(conn);
  if (after_catalog_read_) after_catalog_read_();
  bool started = false;
  bool settled = true;
  // The definitions (id, version) whose reads the installed capture covers.
  // Only these may start a build: a transform defined, resumed or altered
  // after `defs` was read is not covered by what this pass installs, and
  // waits for the next pass.
  Covered covered;
  // The tables each transform's reads are covered on in this pass: a
  // transform over several tables (joins) starts its build in the install of
  // the last of them, so its build misses no change to any.
  std::map<int, std::set<int>> covered_on;
  auto tables = store_.captured_tables(conn);
  std::vector<bind::TableName> names;
  for (const auto& table : tables) names.push_back({table.schema, table.name});
  auto described = bind::describe_tables(conn, names);  // one round trip
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const auto& table = tables[i];
    std::vector<catalog::TransformDef> readers;
    bool waiting = false;
    for (const auto& d : defs)
      if (d.reads_table(table.id)) {
        readers.push_back(d);
        waiting = waiting || d.status == catalog::Status::waiting_to_backfill;
      }
    if (readers.empty()) {
      // Partitions may carry capture while their root does not yet (its
      // install waited for a lock when the last reader paused).
      if (table.installed_signature)
        settled = uninstall(conn, table) && settled;
      else
        settled = partitions_.uninstall(conn, table) && settled;
      continue;
    }
    if (waiting) settled = false;  // its build starts once the status moved
    auto reads = union_reads(readers, table.id);
    // A table that is gone gets no typed path; installing then fails on it
    // and is recorded.
    std::vector<compile::PlacedColumn> layout;
    if (described[i]) layout = compile::capture_layout(table, reads, placed_columns(*described[i]));
    // A partitioned table's move guard watches its partition keys' columns.
    std::vector<compile::WatchedColumn> moves;
    if (described[i] && described[i]->partitioned())
      moves = move_guard_columns(conn, described[i]->oid);
    std::string signature = capture_signature(table, reads, layout, moves);
    // A partitioned table's partitions first: the root's install starts
    // builds, which must miss no write made straight into a partition.
    if (described[i] && described[i]->partitioned()) {
      bool nodes = false;
      try {
        nodes = partitions_.install(conn, table, reads);
      } catch (const pg::SqlError& e) {
        if (!conn.healthy()) throw;
        record_failure(conn, table, e.what());
        settled = false;
        continue;
      }
      if (!nodes) {
        record_wait(conn, table);
        settled = false;
        continue;
      }
    }
    auto mark = [&] {
      cover(covered, readers);
      for (const auto& d : readers) covered_on[d.id].insert(table.id);
    };
    if (table.installed_signature == signature && !waiting) {
      mark();
      continue;
    }
    std::vector<catalog::TransformDef> startable;
    for (const auto& d : readers) {
      bool rest = true;
      for (int id : d.table_ids()) rest = rest && (id == table.id || covered_on[d.id].count(id));
      if (rest) startable.push_back(d);
    }
    try {
      if (install(conn, table, reads, layout, moves, signature, startable, started))
        mark();
      else
        settled = false;
    } catch (const pg::SqlError& e) {
      if (!conn.healthy()) throw;
      record_failure(conn, table, e.what());  // this table only; the others go on
      settled = false;
    }
  }
  started = start_field_builds(conn, covered) || started;
  settled_ = settled && !lifecycle_.any_awaiting_capture(conn);
  return started;
}

// A field build may start once capture covers the fields' reads and every
// drain transaction that began before the ALTER committed has ended (such a
// transaction may still write with the old definition). The fence is a time
// taken after the commit was seen; the build starts when no worker
// transaction older than the fence is open.
bool Reconciler::start_field_builds(pg::Connection& conn, const Covered& covered) {
  lifecycle_.fence_field_builds(conn);
  auto started = lifecycle_.start_fenced_field_builds(conn, covered);
  for (const auto& target : started)
    base::log_event(
        spdlog::level::info, "field_build_started", target, nlohmann::json::object(),
        fmt::format("transform {}: capture covers its changed fields; building them", target));
  return !started.empty();
}

bool Reconciler::install(pg::Connection& conn, const catalog::CapturedTable& table,
                         const std::vector<Column>& reads,
                         const std::vector<compile::PlacedColumn>& layout,
                         const std::vector<compile::WatchedColumn>& moves,
                         const std::string& signature,
                         const std::vector<catalog::TransformDef>& readers, bool& started) {
  auto sql = compile::compile_capture(table, reads, layout, ring_);
  std::string qualified = base::qualified(table.schema, table.name);
  Covered mine;
  cover(mine, readers);
  std::vector<std::string> moved;  // transforms moved to backfilling
  bool installed = pg::try_under_lock_timeout(conn, [&] {
    put_capture(conn, qualified, sql);
    if (!moves.empty()) put_move_guard(conn, table, moves, ring_);
    store_.mark_capture_installed(conn, table.id, signature, qualified,
                                  sql.objects.function_digest);
    moved = lifecycle_.start_builds(conn, table.id, qualified, mine);
  });
  if (!installed) {
    record_wait(conn, table);
    return false;
  }
  base::log_event(spdlog::level::info, "capture_installed", "",
                  {{"table", table.schema + "." + table.name}},
                  fmt::format("capture installed on {}", qualified));
  for (const auto& target : moved)
    base::log_event(spdlog::level::info, "build_started", target,
                    {{"table", table.schema + "." + table.name}},
                    fmt::format("transform {}: capture covers {}; building", target, qualified));
  started = started || !moved.empty();
  return true;
}

void Reconciler::record_wait(pg::Connection& conn, const catalog::CapturedTable& table) {
  std::string name = table.schema + "." + table.name;
  auto started = lifecycle_.record_capture_wait(conn, table.id, name,
                                                base::qualified(table.schema, table.name));
  if (!started.empty()) base::ProcessMetrics::of(store_.schema()).capture_wait_started();
  for (const auto& target : started)
    base::log_event(spdlog::level::info, "capture_waiting", target, {{"table", name}},
                    fmt::format("transform {} waits for capture on {}: another session holds a "
                                "lock on it; retried on every tick",
                                target, name));
}

void Reconciler::record_failure(pg::Connection& conn, const catalog::CapturedTable& table,
                                const std::string& error) {
  base::log_event(
      spdlog::level::warn, "capture_failed", "",
      {{"table", table.schema + "." + table.name}, {"error", error}},
      fmt::format("installing capture on {}.{} failed: {}", table.schema, table.name, error));
  lifecycle_.record_capture_failure(conn, table.id, table.schema + "." + table.name, error);
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
  auto objects = compile::capture_objects(located, ring_);
  try {
    if (!partitions_.uninstall(conn, table)) return false;
    return pg::try_under_lock_timeout(conn, [&] {
      for (const auto& d : objects.drop) conn.exec(d);
      store_.mark_capture_removed(conn, table.id);
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
