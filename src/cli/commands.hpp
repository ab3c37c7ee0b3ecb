// The subcommands of `trellis`: each registers itself on the app and says how to run it.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "cli/options.hpp"
#include "trellis/trellis.hpp"

namespace trellis::cli {

// Exit codes (README): 0 ok, 1 error, 2 a wait timed out (a timeout error
// reaching main exits 2; self-check: also not caught up or not live; 3
// diverged).
constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitTimeout = 2;

struct Command {
  CLI::App* app = nullptr;
  // Runs the command after parsing; returns the exit code. Throws
  // trellis::Error, which main reports as `error (<code>): <message>`.
  std::function<int()> run;
};

Command add_apply_command(CLI::App& app, const GlobalOptions& global);
Command add_run_command(CLI::App& app, const GlobalOptions& global);
Command add_status_command(CLI::App& app, const GlobalOptions& global);
Command add_await_command(CLI::App& app, const GlobalOptions& global);
Command add_dev_command(CLI::App& app, const GlobalOptions& global);
Command add_demo_command(CLI::App& app, const GlobalOptions& global);
Command add_quarantine_command(CLI::App& app, const GlobalOptions& global);
Command add_test_reset_command(CLI::App& app, const GlobalOptions& global);
Command add_self_check_command(CLI::App& app, const GlobalOptions& global);
Command add_dump_command(CLI::App& app, const GlobalOptions& global);
Command add_restore_command(CLI::App& app, const GlobalOptions& global);

// What apply() did, as `trellis apply` prints it: "kind target: status", and
// the statement's note, when it has one, indented on the next line.
std::string applied_line(const Applied& applied);

// The text of `file` ("-": stdin); not_found when it cannot be read.
std::string read_input(const std::string& file);

}  // namespace trellis::cli
