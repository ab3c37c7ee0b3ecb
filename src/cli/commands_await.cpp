// `trellis await`: wait until every change committed so far has reached every target.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"

namespace trellis::cli {

namespace {

int run_await(const GlobalOptions& global, double timeout_s) {
  auto trellis = Trellis::connect(handle_options(global));
  auto token = trellis->watermark_token();
  bool staging = trellis->has_live_staging_worker();
  bool drains = trellis->has_live_drain_workers();
  if (!staging || !drains)
    spdlog::warn("no {} running; nothing will move: start `trellis run`",
                 !staging && !drains ? "staging worker and no drain workers"
                 : staging           ? "drain workers"
                                     : "staging worker");
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  bool converged = trellis->await_converged(token, timeout);
  trellis->shutdown();
  if (!converged) {
    std::cerr << fmt::format("timed out after {:g} s", timeout_s) << std::endl;
    return kExitTimeout;
  }
  std::cout << "converged" << std::endl;
  return kExitOk;
}

}  // namespace

Command add_await_command(CLI::App& app, const GlobalOptions& global) {
  auto timeout = std::make_shared<double>(60.0);
  auto* sub = app.add_subcommand(
      "await", "wait until every change committed before now has reached every target");
  sub->add_option("--timeout", *timeout, "seconds to wait (exit 2 when they pass)")
      ->capture_default_str()
      ->check(seconds_validator());
  return {sub, [&global, timeout] { return run_await(global, *timeout); }};
}

}  // namespace trellis::cli
