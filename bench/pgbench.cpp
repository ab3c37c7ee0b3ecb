// Runs pgbench (from the PostgreSQL server's bin directory) and parses its
// summary; see pgbench.hpp.
#include "pgbench.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "spawn.hpp"
#include "testkit/server_bin.hpp"
#include "trellis/error.hpp"

namespace trellis::bench {

namespace {

// pgbench from the server's bin directory (where the testkit's initdb is),
// else the one on /usr/bin.
std::string pgbench_path() {
  std::vector<std::string> candidates;
  try {
    candidates.push_back(testkit::server_bin_dir() + "/pgbench");
  } catch (const Error&) {
  }
  candidates.push_back("/usr/bin/pgbench");
  for (const auto& c : candidates)
    if (::access(c.c_str(), X_OK) == 0) return c;
  throw Error(ErrorCode::internal, "pgbench not found (install postgresql-15)");
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

double match_number(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(pattern))) return std::stod(m[1]);
  return 0;
}

}  // namespace

Pgbench::Pgbench(const std::string& url, const PgbenchArgs& args, const std::string& dir) {
  static std::atomic<int> counter{0};
  std::string base =
      dir + "/pgbench-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  std::string script_path = base + ".sql";
  out_path_ = base + ".out";
  std::ofstream(script_path) << args.script << "\n";
  std::vector<std::string> a = {pgbench_path(), "-n",
                                "-f",           script_path,
                                "-c",           std::to_string(args.clients),
                                "-j",           std::to_string(std::min(args.clients, 2)),
                                "-T",           std::to_string(args.seconds),
                                "-M",           "prepared"};
  if (args.rate > 0) a.insert(a.end(), {"-R", std::to_string(args.rate)});
  a.push_back(url);
  pid_ = spawn_logged(a[0], a, out_path_, false);
}

Pgbench::~Pgbench() {
  stop();
}

void Pgbench::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }
}

PgbenchResult Pgbench::finish() {
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = 0;
  std::string out = read_file(out_path_);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(ErrorCode::internal, "pgbench failed: " + out);
  PgbenchResult r;
  r.tps = match_number(out, R"(tps = ([0-9.]+) \(without initial connection time\))");
  r.transactions = static_cast<int64_t>(
      match_number(out, R"(number of transactions actually processed: (\d+))"));
  r.latency_ms = match_number(out, R"(latency average = ([0-9.]+) ms)");
  r.failed = static_cast<int64_t>(match_number(out, R"(number of failed transactions: (\d+))"));
  return r;
}

PgbenchResult pgbench(const std::string& url, const PgbenchArgs& args, const std::string& dir) {
  return Pgbench(url, args, dir).finish();
}

}  // namespace trellis::bench
