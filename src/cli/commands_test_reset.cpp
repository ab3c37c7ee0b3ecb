// `trellis test-reset`: the reset an application's test suite runs in its
// setup hook (Trellis::test_reset): repair capture, rebuild, wait until every
// transform is live and caught up, and say what was repaired.
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "api/records_json.hpp"
#include "cli/commands.hpp"

namespace trellis::cli {

namespace {

std::string listed(const std::vector<std::string>& targets) {
  std::string out;
  for (const auto& t : targets) out += (out.empty() ? "" : ", ") + t;
  return out.empty() ? "none" : out;
}

int run_test_reset(const GlobalOptions& global, double timeout_s, bool json) {
  auto trellis = Trellis::connect(handle_options(global));
  TestResetReport r =
      trellis->test_reset(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
  trellis->shutdown();
  if (json) {
    std::cout << api::test_reset_json(r).dump() << std::endl;
    return kExitOk;
  }
  std::cout << fmt::format("capture repaired: {}\nresumed: {}\nrebuilt: {}\n", listed(r.disrupted),
                           listed(r.resumed), listed(r.rebuilt));
  if (!r.left_paused.empty())
    std::cout << fmt::format("left paused (PAUSE TRANSFORM): {}\n", listed(r.left_paused));
  std::cout << fmt::format("live and caught up in {:.2f} s", r.seconds) << std::endl;
  return kExitOk;
}

}  // namespace

Command add_test_reset_command(CLI::App& app, const GlobalOptions& global) {
  auto timeout = std::make_shared<double>(60.0);
  auto json = std::make_shared<bool>(false);
  auto* sub = app.add_subcommand(
      "test-reset",
      "for a test suite's setup: repair capture, rebuild every transform, wait until all are live "
      "and caught up (needs running workers)");
  sub->add_option("--timeout", *timeout, "seconds to wait (exit 2 when they pass)")
      ->capture_default_str()
      ->check(seconds_validator());
  sub->add_flag("--json", *json, "print what was repaired as one JSON object");
  return {sub, [&global, timeout, json] { return run_test_reset(global, *timeout, *json); }};
}

}  // namespace trellis::cli
