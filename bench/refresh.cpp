// refresh: after 1%, 10% and 50% of a 1M-row source (50k in quick mode;
// --rows sets it) changed in one statement, the time Trellis takes to
// converge versus REFRESH MATERIALIZED VIEW (and CONCURRENTLY) of the
// equivalent view, for the standard shapes (1-1, 100 groups, one group per
// ten rows up to 100,000 groups, and the three join shapes, whose changed
// rows are the source's in join_one_to_one and join_groups and the fanning
// table's in join_fanout; --shape picks them).
#include <fmt/format.h>

#include "benchmarks.hpp"
#include "worker.hpp"

namespace trellis::bench {

void refresh(Run& run) {
  int64_t rows = run.source_rows(50000, 1000000);
  auto timeout = std::chrono::seconds(1800);
  for (const auto& shape : standard_shapes(run, rows)) {
    Db db(run, "refresh");
    create_source(db, rows, shape.groups);
    if (!shape.setup.empty()) db.sql(shape.setup);
    db.trellis().apply(shape.statement);
    auto worker =
        Worker::spawn(db.url(), 2, run.settings().tick, run.scratch_dir() + "/refresh.log");
    db.wait_live(shape.target, timeout);
    db.sql(fmt::format("CREATE MATERIALIZED VIEW mv AS {}; CREATE UNIQUE INDEX ON mv ({})",
                       shape.select, shape.key));
    db.sql("VACUUM ANALYZE mv");
    for (int pct : {1, 10, 50}) {
      json line = {{"shape", shape.name}, {"groups", shape.groups},
                   {"source_rows", rows}, {"changed_pct", pct},
                   {"drain_threads", 2},  {"tick_ms", run.settings().tick.count()}};
      try {
        db.converge(timeout);
        db.sql("CHECKPOINT");
        line["update_s"] =
            db.timed(fmt::format("UPDATE src SET amount = amount + 1 WHERE id % 100 < {}", pct));
        double converge_s = db.converge(timeout);
        line["converge_s"] = converge_s;
        line["refresh_s"] = db.timed("REFRESH MATERIALIZED VIEW mv");
        line["refresh_concurrently_s"] = db.timed("REFRESH MATERIALIZED VIEW CONCURRENTLY mv");
        line["refresh_over_converge"] = line["refresh_s"].get<double>() / converge_s;
        line["refresh_concurrently_over_converge"] =
            line["refresh_concurrently_s"].get<double>() / converge_s;
        std::string diff = oracle_all(db, {shape.target});
        run.report("refresh", line, diff);
      } catch (const std::exception& e) {
        run.fail("refresh", line, e.what());
      }
    }
  }
}

}  // namespace trellis::bench
