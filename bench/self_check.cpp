// self_check: the time an audit of a live target takes (strict mode, so one
// pass over the pages; and standard mode) versus a plain EXCEPT ALL of the
// target and its definition's SELECT in one statement (the oracle the tests
// use), for the standard shapes over a 1M-row source (50k in quick mode;
// --rows sets it). The audit pages in key order with a snapshot per page
// and never holds one transaction over the whole target; the EXCEPT reads
// both sides whole in one.
#include <fmt/format.h>

#include "benchmarks.hpp"
#include "worker.hpp"

namespace trellis::bench {

namespace {

// Seconds the audit of `target` takes, and its report.
std::pair<double, SelfCheckReport> timed_audit(Db& db, const std::string& target,
                                               const std::string& mode) {
  SelfCheckOptions options;
  options.mode = mode;
  auto start = std::chrono::steady_clock::now();
  auto job = db.trellis().self_check(target, options);
  job = db.trellis().await_self_check(job.id, std::chrono::seconds(3600));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!job.report) throw std::runtime_error("self-check " + job.state + ": " + job.error);
  return {seconds, *job.report};
}

}  // namespace

void self_check(Run& run) {
  int64_t rows = run.source_rows(50000, 1000000);
  auto timeout = std::chrono::seconds(1800);
  for (const auto& shape : standard_shapes(run, rows)) {
    Db db(run, "self_check");
    create_source(db, rows, shape.groups);
    if (!shape.setup.empty()) db.sql(shape.setup);
    db.trellis().apply(shape.statement);
    auto worker =
        Worker::spawn(db.url(), 2, run.settings().tick, run.scratch_dir() + "/self_check.log");
    json line = {{"shape", shape.name}, {"groups", shape.groups}, {"source_rows", rows}};
    try {
      db.wait_live(shape.target, timeout);
      db.converge(timeout);
      db.sql("VACUUM ANALYZE");
      auto [strict_s, strict] = timed_audit(db, shape.target, "strict");
      auto [standard_s, standard] = timed_audit(db, shape.target, "standard");
      auto start = std::chrono::steady_clock::now();
      std::string diff = oracle_all(db, {shape.target});
      double except_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      line["rows_compared"] = strict.rows_compared;
      line["self_check_strict_s"] = strict_s;
      line["self_check_standard_s"] = standard_s;
      line["except_s"] = except_s;
      line["except_over_self_check"] = except_s / strict_s;
      if (strict.outcome != "converged" || standard.outcome != "converged")
        diff +=
            fmt::format("self-check: {} (strict), {} (standard)", strict.outcome, standard.outcome);
      run.report("self_check", line, diff);
    } catch (const std::exception& e) {
      run.fail("self_check", line, e.what());
    }
  }
}

}  // namespace trellis::bench
