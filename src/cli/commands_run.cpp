// `trellis run`: run this process's workers until SIGINT/SIGTERM, then stop cleanly.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <memory>

#include "cli/commands.hpp"
#include "cli/signals.hpp"

namespace trellis::cli {

namespace {

struct RunArgs {
  bool no_staging = false;
  int drain_threads = 2;
  std::string metrics;
};

int run_workers(const GlobalOptions& global, const RunArgs& args) {
  // Before any thread starts, so only the sigwait thread sees the signals.
  StopSignals signals;
  if (args.no_staging && args.drain_threads == 0)
    spdlog::warn("--no-staging with --drain-threads 0: this process runs no worker");
  Options options = handle_options(global);
  options.staging = !args.no_staging;
  options.drain_threads = args.drain_threads;
  options.pool_size = 4;
  options.metrics_address = args.metrics;
  auto trellis = Trellis::connect(options);
  if (!args.metrics.empty())
    spdlog::info("serving Prometheus metrics at http://{}:{}/metrics",
                 args.metrics.substr(0, args.metrics.rfind(':')), trellis->metrics_port());
  spdlog::info("running: {}, {} drain thread{} (targets in schema {}); stop with SIGINT or SIGTERM",
               options.staging ? "staging worker" : "no staging worker", options.drain_threads,
               options.drain_threads == 1 ? "" : "s", options.target_schema);
  signals.wait();
  spdlog::info("received {}; stopping the workers", signals.name());
  trellis->shutdown();
  spdlog::info("stopped cleanly");
  return kExitOk;
}

}  // namespace

Command add_run_command(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<RunArgs>();
  auto* sub = app.add_subcommand("run", "run the staging worker and drain threads until stopped");
  sub->add_flag("--no-staging", args->no_staging,
                "do not run the staging worker (another process runs it)");
  sub->add_option("--drain-threads", args->drain_threads, "drain threads to run")
      ->capture_default_str()
      ->check(CLI::Range(0, 256));
  sub->add_option(
      "--metrics", args->metrics,
      "serve Prometheus metrics at http://ADDR/metrics (HOST:PORT; port 0 picks a free one)");
  return {sub, [&global, args] { return run_workers(global, *args); }};
}

}  // namespace trellis::cli
