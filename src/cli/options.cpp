// The global options of every trellis command and their defaults.
#include "cli/options.hpp"

#include <cstdlib>

namespace trellis::cli {

void add_global_options(CLI::App& app, GlobalOptions& global) {
  auto* group = "Global options (accepted by every command)";
  app.add_option("-d,--database-url", global.database_url,
                 "libpq connection string or URI (default: $TRELLIS_DATABASE_URL, else the "
                 "PG* environment variables)")
      ->group(group);
  app.add_option("--schema", global.schema, "catalog schema of the instance")
      ->capture_default_str()
      ->group(group);
  app.add_option("--target-schema", global.target_schema,
                 "schema where unqualified targets are created")
      ->capture_default_str()
      ->group(group);
  app.add_flag("--log-json", global.log_json, "log JSON lines to stderr")->group(group);
  app.add_flag("-v,--verbose", global.verbose, "log debug details")->group(group);
}

std::string resolve_url(const GlobalOptions& global) {
  if (!global.database_url.empty()) return global.database_url;
  if (const char* env = std::getenv("TRELLIS_DATABASE_URL")) return env;
  return "";
}

Options handle_options(const GlobalOptions& global) {
  Options o;
  o.url = resolve_url(global);
  o.schema = global.schema;
  o.target_schema = global.target_schema;
  o.staging = false;
  o.drain_threads = 0;
  o.pool_size = 2;
  return o;
}

CLI::Validator seconds_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !(v >= 0 && v <= 1e7))
          return "expected a number of seconds between 0 and 10000000, got " + text;
        return "";
      },
      "SECONDS");
}

}  // namespace trellis::cli
