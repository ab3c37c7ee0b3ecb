// join_fanout: a change to one row of a joined table that reaches many target
// rows. The source `src` (1M rows; 30k in quick mode; --rows sets it) is
// spread over grp_dim rows of 10,000 source rows each. Two shapes: the to-one
// star join_one_to_one (a grp_dim row's label read by each of its 10,000 src
// rows) and join_fanout (grp_dim joined to the src rows that match it, a
// join that fans out: one target row per pair). Up to 10 grp_dim labels are
// updated, one transaction each, and Trellis converges; the floor is the
// same rows rewritten by one set-based UPDATE of a plain copy joined to
// grp_dim, as a hand-written trigger would. The ratio is floor seconds /
// converge seconds.
#include <fmt/format.h>

#include <algorithm>

#include "benchmarks.hpp"
#include "worker.hpp"

namespace trellis::bench {

namespace {

// The set-based statement that brings `plain` up to date for the updated
// grp_dim rows `ids` (an SQL array), per shape.
std::string floor_update(const Shape& shape, const std::string& ids) {
  if (shape.name == "join_fanout")
    return fmt::format(
        "UPDATE plain_copy p SET label = g.label FROM grp_dim g WHERE p.id = g.id AND g.id = "
        "ANY({})",
        ids);
  return fmt::format(
      "UPDATE plain_copy p SET label = g.label FROM src s JOIN grp_dim g ON g.id = s.grp WHERE "
      "p.id = s.id AND s.grp = ANY({})",
      ids);
}

}  // namespace

void join_fanout(Run& run) {
  int64_t rows = run.source_rows(30000, 1000000);
  int64_t groups = std::max<int64_t>(1, rows / 10000);
  int64_t updates = std::min<int64_t>(10, groups);
  auto timeout = std::chrono::seconds(1800);
  std::string log = run.scratch_dir() + "/join_fanout.log";
  std::vector<Shape> shapes = {join_one_to_one_shape(groups), join_fanout_shape(groups)};
  const auto& only = run.settings().shapes;
  for (const auto& shape : shapes) {
    if (!only.empty() && std::find(only.begin(), only.end(), shape.name) == only.end()) continue;
    json line = {{"shape", shape.name},
                 {"source_rows", rows},
                 {"rows_per_joined_row", rows / groups},
                 {"joined_rows_updated", updates},
                 {"drain_threads", 2},
                 {"tick_ms", run.settings().tick.count()}};
    try {
      Db db(run, "fanout");
      create_source(db, rows, groups);
      db.sql(shape.setup);
      db.trellis().apply(shape.statement);
      auto worker = Worker::spawn(db.url(), 2, run.settings().tick, log);
      db.wait_live(shape.target, timeout);
      db.converge(timeout);
      create_plain_copy(db, shape, "plain_copy");
      std::string ids = fmt::format("ARRAY(SELECT generate_series(0, {}))", updates - 1);
      db.sql("CHECKPOINT");
      reset_statements(db);
      auto t0 = Clock::now();
      for (int64_t g = 0; g < updates; ++g)
        db.sql(fmt::format("UPDATE grp_dim SET label = label || '+' WHERE id = {}", g));
      line["update_s"] = seconds_since(t0);
      db.converge(timeout);
      double converge_s = seconds_since(t0);
      line["top_statements"] = top_statements(db, 4);
      worker->stop();
      // The floor on the same committed rows, with no worker running.
      db.sql("CHECKPOINT");
      double floor_s = db.timed(floor_update(shape, ids));
      line["target_rows_reached"] = rows / groups * updates;
      line["converge_s"] = converge_s;
      line["floor_s"] = floor_s;
      line["ratio_to_floor"] = floor_s / converge_s;
      run.report("join_fanout", line, oracle_all(db, {shape.target}));
    } catch (const std::exception& e) {
      run.fail("join_fanout", line, e.what());
    }
  }
}

}  // namespace trellis::bench
