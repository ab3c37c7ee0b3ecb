// `trellis self-check TARGET`: queues an audit of the target
// (Trellis::self_check), waits while the drain threads of a running worker
// run it, and prints the outcome and each divergence as a table, or the
// whole report as JSON. Exit 0 converged, 3 diverged, 2 not caught up or
// not live (or the wait timed out), 1 an error or a job that failed.
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "api/records_json.hpp"
#include "cli/commands.hpp"
#include "cli/text_table.hpp"

namespace trellis::cli {

namespace {

constexpr int kExitDiverged = 3;

struct SelfCheckArgs {
  std::string target;
  bool json = false;
  bool strict = false;
  double await_timeout_s = 30;
  double timeout_s = 3600;
};

std::string shown(const std::optional<std::string>& v) {
  return v ? *v : "NULL";
}

void print_text(const SelfCheckJob& job) {
  if (!job.report) {
    std::cout << fmt::format("self-check of {} {}: {}\n", job.target, job.state, job.error);
    return;
  }
  const auto& r = *job.report;
  std::cout << fmt::format("{}: {} ({} rows compared{})\n", r.target, r.outcome, r.rows_compared,
                           r.truncated ? "; stopped early" : "");
  if (!r.detail.empty()) std::cout << r.detail << "\n";
  if (r.divergences.empty()) return;
  TextTable table({"kind", "key", "column", "persisted", "recomputed"});
  std::vector<std::string> capture;
  for (const auto& d : r.divergences) {
    if (d.kind == "capture") {
      capture.push_back(d.detail);
      continue;
    }
    bool cell = d.kind == "cell";
    table.add_row(
        {d.kind, d.key, d.column, cell ? shown(d.persisted) : "", cell ? shown(d.recomputed) : ""});
  }
  for (const auto& c : capture) std::cout << "capture: " << c << "\n";
  if (!table.empty()) std::cout << table.render();
  std::cout << "Trellis does not repair a target; PAUSE TRANSFORM then RESUME TRANSFORM rebuilds "
               "it.\n";
}

int exit_code(const SelfCheckJob& job) {
  if (!job.report) return kExitError;
  if (job.report->outcome == "converged") return kExitOk;
  if (job.report->outcome == "diverged") return kExitDiverged;
  return kExitTimeout;
}

int run_self_check(const GlobalOptions& global, const SelfCheckArgs& args) {
  auto trellis = Trellis::connect(handle_options(global));
  if (!trellis->has_live_drain_workers())
    throw Error(ErrorCode::validation,
                "no worker with drain threads is running, and a self-check runs on them: start "
                "one with `trellis run`, then run the self-check again");
  SelfCheckOptions options;
  options.mode = args.strict ? "strict" : "standard";
  options.await_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(args.await_timeout_s * 1000));
  auto job = trellis->self_check(args.target, options);
  job = trellis->await_self_check(
      job.id, std::chrono::milliseconds(static_cast<int64_t>(args.timeout_s * 1000)));
  trellis->shutdown();
  if (args.json)
    std::cout << api::self_check_job_json(job).dump() << std::endl;
  else
    print_text(job);
  return exit_code(job);
}

}  // namespace

Command add_self_check_command(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<SelfCheckArgs>();
  auto* sub = app.add_subcommand(
      "self-check",
      "audit a target against its definition recomputed by PostgreSQL (runs on the drain threads "
      "of a running worker); exit 0 converged, 3 diverged, 2 not caught up or not live");
  sub->add_option("target", args->target, "the target ([schema.]table)")->required();
  sub->add_flag("--json", args->json, "print the report as one JSON object");
  sub->add_flag("--strict", args->strict,
                "report each difference at once, without checking it again after the drains "
                "catch up (for a system with no writes)");
  sub->add_option("--await-timeout", args->await_timeout_s,
                  "seconds each wait for the drains to catch up may take")
      ->capture_default_str()
      ->check(seconds_validator());
  sub->add_option("--timeout", args->timeout_s, "seconds to wait for the audit (exit 2 after)")
      ->capture_default_str()
      ->check(seconds_validator());
  return {sub, [&global, args] { return run_self_check(global, *args); }};
}

}  // namespace trellis::cli
