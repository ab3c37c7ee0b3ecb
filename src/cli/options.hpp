// Options every trellis command accepts (`trellis --help`) and how they become trellis::Options.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "trellis/trellis.hpp"

namespace trellis::cli {

struct GlobalOptions {
  std::string database_url;  // --database-url/-d; resolved by resolve_url()
  std::string schema = "trellis";
  std::string target_schema = "public";
  bool log_json = false;
  bool verbose = false;
};

// Adds the global options to `app`. Subcommands created afterwards accept
// them too, before or after the subcommand name.
void add_global_options(CLI::App& app, GlobalOptions& global);

// --database-url, else $TRELLIS_DATABASE_URL, else "" (libpq's PG* variables).
std::string resolve_url(const GlobalOptions& global);

// Options for a handle of this instance with no workers.
Options handle_options(const GlobalOptions& global);

// A `--timeout` value: a number of seconds between 0 and 10,000,000.
CLI::Validator seconds_validator();

}  // namespace trellis::cli
