// `trellis dev`: a local PostgreSQL for development, kept between runs, served until stopped.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/signals.hpp"
#include "pg/connection.hpp"
#include "testkit/cluster.hpp"

namespace trellis::cli {

namespace {

constexpr const char* kDevDatabase = "trellis";

// $HOME/.trellis/dev; as root (whose cluster runs as `postgres`, which must be
// able to reach the dir) or without $HOME, /tmp/trellis-dev-<uid>.
std::string default_dir() {
  const char* home = std::getenv("HOME");
  if (geteuid() != 0 && home && *home) return std::string(home) + "/.trellis/dev";
  return fmt::format("/tmp/trellis-dev-{}", geteuid());
}

void ensure_database(const testkit::Cluster& cluster) {
  auto conn = pg::Connection::open(cluster.url("postgres"));
  auto exists = conn->exec("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)",
                           {std::string(kDevDatabase)});
  if (!exists.get_bool(0, 0)) conn->exec(fmt::format("CREATE DATABASE {}", kDevDatabase));
}

int run_dev(const GlobalOptions& global, const std::string& dir_arg) {
  StopSignals signals;
  std::string dir = dir_arg.empty() ? default_dir() : dir_arg;
  spdlog::info("starting PostgreSQL in {}", dir);
  testkit::ClusterOptions cluster_options;
  cluster_options.base_dir = dir;
  cluster_options.keep = true;
  auto cluster = testkit::Cluster::start(cluster_options);
  ensure_database(*cluster);
  std::string url = cluster->url(kDevDatabase);
  Options options = handle_options(global);
  options.url = url;
  Trellis::connect(options)->shutdown();  // creates (or migrates) the catalog
  std::cout << fmt::format(
                   "PostgreSQL is running (data in {}); catalog schema {} is ready.\n\n"
                   "export TRELLIS_DATABASE_URL='{}'\n\n"
                   "then, in another shell: `trellis run` to start the workers and "
                   "`trellis apply '...'` to define transforms.\n"
                   "Ctrl-C stops the server (the data dir is kept).",
                   cluster->dir(), global.schema, url)
            << std::endl;
  signals.wait();
  spdlog::info("received {}; stopping PostgreSQL (data kept in {})", signals.name(),
               cluster->dir());
  cluster.reset();
  return kExitOk;
}

}  // namespace

Command add_dev_command(CLI::App& app, const GlobalOptions& global) {
  auto dir = std::make_shared<std::string>();
  auto* sub = app.add_subcommand(
      "dev", "start a local PostgreSQL for development and print its URL (runs until stopped)");
  sub->add_option("--dir", *dir,
                  "cluster directory (default: $HOME/.trellis/dev, or /tmp/trellis-dev-<uid> "
                  "as root)");
  return {sub, [&global, dir] { return run_dev(global, *dir); }};
}

}  // namespace trellis::cli
