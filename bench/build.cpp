// build: define-to-live of a populated source (10M rows in full mode, 30k in
// quick mode, or --rows), for a 1-1 transform, 100 groups and many
// groups, a 1-1 over a snowflake join, revenue per region over it and a
// join that fans out (grp_dim to its 10,000 src rows each), with
// and without 2,000 single-row writes/s running. Compared with
// CREATE TABLE AS of the same SELECT, without and with adding the primary
// key the target has; reports the worker's peak RSS and how many keys the
// drains parked for the build's discharge.
#include <fmt/format.h>

#include <algorithm>

#include "benchmarks.hpp"
#include "pgbench.hpp"
#include "worker.hpp"

namespace trellis::bench {

void build(Run& run) {
  int64_t rows = run.source_rows(30000, 10000000);
  int write_rate = 2000;
  auto timeout = std::chrono::seconds(3600);
  for (const auto& shape : standard_shapes(run, rows)) {
    for (bool writes : {false, true}) {
      json line = {{"shape", shape.name},
                   {"groups", shape.groups},
                   {"source_rows", rows},
                   {"writes_per_s", writes ? write_rate : 0},
                   {"drain_threads", 2}};
      try {
        Db db(run, "build");
        create_source(db, rows, shape.groups);
        if (!shape.setup.empty()) db.sql(shape.setup);
        line["ctas_s"] = db.timed("CREATE TABLE ctas AS " + shape.select);
        db.sql("DROP TABLE ctas; CHECKPOINT");
        line["ctas_pk_s"] = db.timed("CREATE TABLE ctas AS " + shape.select +
                                     "; ALTER TABLE ctas ADD PRIMARY KEY (" + shape.key + ")");
        db.sql("DROP TABLE ctas; CHECKPOINT");
        std::unique_ptr<Pgbench> load;
        if (writes)
          load = std::make_unique<Pgbench>(
              db.url(),
              PgbenchArgs{fmt::format("\\set id random(1, {})\nUPDATE src SET amount = amount + 1, "
                                      "grp = (grp + 1) % {} WHERE id = :id;",
                                      rows, shape.groups),
                          2, 3600, write_rate},
              run.scratch_dir());
        auto worker =
            Worker::spawn(db.url(), 2, run.settings().tick, run.scratch_dir() + "/build.log");
        reset_statements(db);
        auto t0 = Clock::now();
        db.trellis().apply(shape.statement);
        db.wait_live(shape.target, timeout);
        double build_s = seconds_since(t0);
        line["top_statements"] = top_statements(db, 3);
        if (load) load->stop();
        line["converge_after_s"] = db.converge(timeout);
        // Keys the drains parked for the build's discharge (the statistics
        // collector's count: flushed within a second of each commit).
        line["parked_keys"] = db.scalar(
            "SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables WHERE relid = "
            "to_regclass('trellis.parked_keys')");
        auto usage = worker->stop();
        line["build_s"] = build_s;
        line["ratio_to_ctas"] = line["ctas_s"].get<double>() / build_s;
        line["ratio_to_ctas_pk"] = line["ctas_pk_s"].get<double>() / build_s;
        line["worker_peak_rss_mb"] = usage.peak_rss_kb / 1024.0;
        line["worker_cpu_s"] = usage.cpu_seconds;
        std::string diff = oracle_all(db, {shape.target});
        run.report("build", line, diff);
      } catch (const std::exception& e) {
        run.fail("build", line, e.what());
      }
    }
  }
}

}  // namespace trellis::bench
