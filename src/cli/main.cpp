// The trellis command: parses the command line, runs one subcommand, maps errors to exit codes.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <vector>

#include "cli/commands.hpp"
#include "cli/logging.hpp"
#include "cli/options.hpp"
#include "trellis/error.hpp"

int main(int argc, char** argv) {
  using namespace trellis::cli;
  CLI::App app("Trellis keeps derived tables inside PostgreSQL incrementally up to date.",
               "trellis");
  GlobalOptions global;
  add_global_options(app, global);
  app.fallthrough();  // global options are accepted after the subcommand name too
  std::vector<Command> commands{
      add_apply_command(app, global),      add_run_command(app, global),
      add_status_command(app, global),     add_await_command(app, global),
      add_dev_command(app, global),        add_demo_command(app, global),
      add_quarantine_command(app, global), add_test_reset_command(app, global),
      add_self_check_command(app, global), add_dump_command(app, global),
      add_restore_command(app, global),
  };
  for (auto& command : commands)
    command.app->footer(
        "Also accepted: the global options -d/--database-url, --schema, --target-schema, "
        "--log-json, -v (see trellis --help).");
  app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitError;
  }
  setup_logging(global.log_json, global.verbose, global.schema);
  for (const auto& command : commands) {
    if (!command.app->parsed()) continue;
    try {
      return command.run();
    } catch (const trellis::Error& e) {
      std::cerr << fmt::format("error ({}): {}", trellis::to_string(e.code()), e.what())
                << std::endl;
      // A wait that ran past its --timeout (await, restore --wait,
      // test-reset, self-check) exits 2, whichever command it was.
      if (e.code() == trellis::ErrorCode::timeout) return kExitTimeout;
    } catch (const std::exception& e) {
      std::cerr << fmt::format("error (internal): {}", e.what()) << std::endl;
    }
    return kExitError;
  }
  return kExitError;  // unreachable: require_subcommand(1)
}
