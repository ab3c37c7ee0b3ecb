// throughput: how fast the drains apply changes. A built target, its workers
// stopped, a backlog of updates committed (1M changes; 30k in quick mode),
// then workers with 1, 2 or 4 drain threads (1 and 2 in quick mode; one after
// the other on the same built source) timed to convergence; then a sustained
// offered load and the time to catch up after it. The floor is the same
// target rows rewritten by one plain set-based statement from the source;
// the ratio is floor seconds / drain seconds. Every standard shape, the join
// shapes included: in join_fanout the updated `src` is the table that fans
// out, so each change maps to the target rows it reaches through the join.
#include <fmt/format.h>

#include "benchmarks.hpp"
#include "pgbench.hpp"
#include "worker.hpp"

namespace trellis::bench {

void throughput(Run& run) {
  int64_t rows = run.source_rows(30000, 1000000);
  auto threads = run.size<std::vector<int>>({1, 2}, {1, 2, 4});
  int sustained_rate = run.size(1000, 2000);
  int sustained_s = run.size(2, 30);
  auto timeout = std::chrono::seconds(1800);
  std::string log = run.scratch_dir() + "/throughput.log";
  for (const auto& shape : standard_shapes(run, rows)) {
    // One built source per shape; each thread count drains a fresh backlog on it.
    std::unique_ptr<Db> db;
    try {
      db = std::make_unique<Db>(run, "tp");
      create_source(*db, rows, shape.groups);
      if (!shape.setup.empty()) db->sql(shape.setup);
      db->trellis().apply(shape.statement);
      auto builder = Worker::spawn(db->url(), 2, run.settings().tick, log);
      db->wait_live(shape.target, timeout);
      db->converge(timeout);
      builder->stop();
      create_plain_copy(*db, shape, "plain_copy");
    } catch (const std::exception& e) {
      run.fail("throughput", {{"shape", shape.name}, {"phase", "setup"}}, e.what());
      continue;
    }
    for (int n : threads) {
      json line = {{"shape", shape.name},
                   {"groups", shape.groups},
                   {"drain_threads", n},
                   {"backlog_changes", rows},
                   {"sustained_offered_per_s", sustained_rate},
                   {"sustained_seconds", sustained_s}};
      try {
        db->sql("CHECKPOINT");
        line["backlog_write_s"] = update_backlog(*db, rows, 10000);
        // The floor first, while no worker runs, on the same committed rows.
        double floor_s = plain_rewrite(*db, shape, "plain_copy");
        reset_statements(*db);
        auto worker = Worker::spawn(db->url(), n, run.settings().tick, log);
        double drain_s = db->converge(timeout);
        line["top_statements"] = top_statements(*db, 6);
        line["drain_s"] = drain_s;
        line["floor_s"] = floor_s;
        line["changes_per_s"] = rows / drain_s;
        line["floor_changes_per_s"] = rows / floor_s;
        line["ratio_to_floor"] = floor_s / drain_s;
        // Sustained: single-row updates at a fixed offered rate, drains running.
        PgbenchArgs load{fmt::format("\\set id random(1, {})\nUPDATE src SET amount = amount + 1 "
                                     "WHERE id = :id;",
                                     rows),
                         2, sustained_s, sustained_rate};
        auto r = pgbench(db->url(), load, run.scratch_dir());
        line["sustained_achieved_tps"] = r.tps;
        line["sustained_catchup_s"] = db->converge(timeout);
        line["worker_cpu_s"] = worker->stop().cpu_seconds;
        run.report("throughput", line, oracle_all(*db, {shape.target}));
      } catch (const std::exception& e) {
        run.fail("throughput", line, e.what());
      }
    }
  }
}

}  // namespace trellis::bench
