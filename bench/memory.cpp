// memory: peak RSS of a worker draining a backlog with one drain thread, for
// two backlog sizes (20k and 80k changes in quick mode, 500k and 5M in full
// mode). Pages are capped, so the peak should not grow with the backlog.
#include <fmt/format.h>

#include "benchmarks.hpp"
#include "worker.hpp"

namespace trellis::bench {

void memory(Run& run) {
  auto backlogs = run.size<std::vector<int64_t>>({20000, 80000}, {500000, 5000000});
  auto timeout = std::chrono::seconds(3600);
  auto shape = one_to_one_shape();
  for (int64_t backlog : backlogs) {
    json line = {{"shape", shape.name}, {"backlog_changes", backlog}, {"drain_threads", 1}};
    try {
      Db db(run, "mem");
      create_source(db, backlog, 100);
      db.trellis().apply(shape.statement);
      std::string log = run.scratch_dir() + "/memory.log";
      {
        auto builder = Worker::spawn(db.url(), 2, run.settings().tick, log);
        db.wait_live(shape.target, timeout);
        db.converge(timeout);
      }
      update_backlog(db, backlog, 50000);
      reset_statements(db);
      auto worker = Worker::spawn(db.url(), 1, run.settings().tick, log);
      double drain_s = db.converge(timeout);
      auto usage = worker->stop();
      line["drain_s"] = drain_s;
      line["changes_per_s"] = backlog / drain_s;
      line["worker_peak_rss_mb"] = usage.peak_rss_kb / 1024.0;
      line["top_statements"] = top_statements(db, 3);
      std::string diff = oracle_all(db, {shape.target});
      run.report("memory", line, diff);
    } catch (const std::exception& e) {
      run.fail("memory", line, e.what());
    }
  }
}

}  // namespace trellis::bench
