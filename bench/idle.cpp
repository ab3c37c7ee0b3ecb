// idle: what running workers cost when nothing is written. Two live
// transforms, a staging worker and two drain threads, no writes for 60 s
// (10 s in quick mode): CPU seconds of the worker process and of its server
// backends, and the statements per second they send (pg_stat_statements).
#include <fmt/format.h>

#include <thread>

#include "benchmarks.hpp"
#include "worker.hpp"

namespace trellis::bench {

namespace {

// CPU seconds of the server backends serving Trellis connections of this database.
double backend_cpu_seconds(Db& db) {
  auto r = db.app().exec(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND "
      "application_name LIKE 'trellis%'");
  double total = 0;
  for (int i = 0; i < r.rows(); ++i)
    total += process_cpu_seconds(static_cast<pid_t>(r.get_int(i, 0)));
  return total;
}

}  // namespace

void idle(Run& run) {
  int seconds = run.size(10, 60);
  json line = {{"seconds", seconds},
               {"drain_threads", 2},
               {"transforms", 2},
               {"tick_ms", run.settings().tick.count()}};
  try {
    Db db(run, "idle");
    create_source(db, 10000, 100);
    db.trellis().apply(one_to_one_shape().statement);
    db.trellis().apply(aggregate_shape(100).statement);
    auto worker = Worker::spawn(db.url(), 2, run.settings().tick, run.scratch_dir() + "/idle.log");
    db.wait_live("src_view", std::chrono::seconds(600));
    db.wait_live("src_totals", std::chrono::seconds(600));
    db.converge(std::chrono::seconds(600));
    db.trellis().shutdown();  // only the worker process talks to the database from here
    std::this_thread::sleep_for(std::chrono::seconds(1));
    reset_statements(db);
    double cpu0 = worker->usage().cpu_seconds;
    double backends0 = backend_cpu_seconds(db);
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    double cpu1 = worker->usage().cpu_seconds;
    double backends1 = backend_cpu_seconds(db);
    int64_t calls = db.scalar(
        "SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements s JOIN pg_database d ON "
        "d.oid = s.dbid WHERE d.datname = current_database() AND s.query NOT LIKE "
        "'%pg_stat_statements_reset%' AND s.query NOT LIKE '%pg_stat_activity%'");
    line["worker_cpu_s"] = cpu1 - cpu0;
    line["backend_cpu_s"] = backends1 - backends0;
    line["statements_per_s"] = double(calls) / seconds;
    line["top_statements"] = top_statements(db, 5, "calls");
    run.emit("idle", line);
  } catch (const std::exception& e) {
    run.fail("idle", line, e.what());
  }
}

}  // namespace trellis::bench
