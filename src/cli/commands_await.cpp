// `trellis await [TARGET...]`: wait until every change committed so far has
// reached every target; with targets named, first until each of them is
// built and caught up (a token does not cover a build).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace trellis::cli {

namespace {

struct AwaitArgs {
  double timeout_s = 60.0;
  std::vector<std::string> targets;
};

int run_await(const GlobalOptions& global, const AwaitArgs& args) {
  using Clock = std::chrono::steady_clock;
  auto trellis = Trellis::connect(handle_options(global));
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(args.timeout_s * 1000));
  auto deadline = Clock::now() + timeout;
  auto left = [&] {
    return std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
  };
  auto token = trellis->watermark_token();
  bool staging = trellis->has_live_staging_worker();
  bool drains = trellis->has_live_drain_workers();
  if (!staging || !drains)
    spdlog::warn("no {} running; nothing will move: start `trellis run`",
                 !staging && !drains ? "staging worker and no drain workers"
                 : staging           ? "drain workers"
                                     : "staging worker");
  for (const auto& target : args.targets)
    std::cout << fmt::format("{}: live", trellis->await_live(target, left()).target) << std::endl;
  bool converged = trellis->await_converged(token, left());
  trellis->shutdown();
  if (!converged) {
    std::cerr << fmt::format("timed out after {:g} s", args.timeout_s) << std::endl;
    return kExitTimeout;
  }
  std::cout << "converged" << std::endl;
  return kExitOk;
}

}  // namespace

Command add_await_command(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<AwaitArgs>();
  auto* sub = app.add_subcommand(
      "await",
      "wait until every change committed before now has reached every target; with targets "
      "named, first until each of them is built and caught up (live)");
  sub->add_option("targets", args->targets, "[schema.]target ... to wait for until live");
  sub->add_option("--timeout", args->timeout_s, "seconds to wait in all (exit 2 when they pass)")
      ->capture_default_str()
      ->check(seconds_validator());
  return {sub, [&global, args] { return run_await(global, *args); }};
}

}  // namespace trellis::cli
