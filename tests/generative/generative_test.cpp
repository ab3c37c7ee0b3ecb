// The generative correctness suite: random schemas, programs, write streams
// and faults (see episode.hpp), each episode judged by the oracle after
// every quiesce; a failing episode is shrunk (see shrink.hpp). Modes
// (environment):
//   (none)                   quick: seeds 1, 2, 3, ... until
//                            TRELLIS_GEN_QUICK_SECONDS (default 90) pass
//   TRELLIS_GEN_SECONDS=N    long: random seeds until N seconds pass
//   TRELLIS_GEN_KEEP_GOING=1 quick or long mode does not stop at a failure;
//                            failures are shrunk after the time is up
//   TRELLIS_GEN_SEED=S       replay seed S once
//   TRELLIS_GEN_SHRINK_PATH=P  with TRELLIS_GEN_SEED: replay the shrunk episode
//   TRELLIS_GEN_VERBOSE=1    also print the program and what ran of passing episodes
//   TRELLIS_GEN_PRINT=1      with TRELLIS_GEN_SEED: print the program, run nothing
//   TRELLIS_GEN_OUT_DIR=D    each failing episode's report, shrink and worker
//                            logs go to D/seed-S/
//   TRELLIS_GEN_HOT=0|1, TRELLIS_GEN_PARTITIONED=0|1  force those draws
//                            (docs/testing.md)
// Shrinking: TRELLIS_GEN_SHRINK (0 off, 1 on; default on except in quick
// mode), TRELLIS_GEN_SHRINK_SECONDS (budget, default 300; in keep-going
// mode shared by all failures), TRELLIS_GEN_SHRINK_TRIES (runs per
// candidate, default 2), TRELLIS_GEN_SHRINK_REPLAYS (tries to reproduce the
// original, default 3), TRELLIS_GEN_SHRINK_MATCH (which failures count as
// the original's: "failure", the default, the same complaint about the same
// transform; "transform", any naming the same transform; "any").
// A failure prints the seed, the replay line and the whole program.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "generative/episode.hpp"
#include "generative/shrink.hpp"
#include "generative/worker_process.hpp"
#include "support/harness.hpp"

namespace trellis::test {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

std::optional<uint64_t> env_number(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::stoull(v);
}

std::string env_text(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string dbname_of(const std::string& url) {
  auto at = url.find("dbname=");
  return at == std::string::npos ? "" : url.substr(at + 7, url.find(' ', at) - at - 7);
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

// Ctrl-C or SIGTERM (a soak being stopped): stop this process's PostgreSQL
// and remove its folder before exiting, since the server is no child of
// ours and would outlive us. The worker processes die with us.
std::atomic<testkit::Cluster*> cluster_to_clean{nullptr};
int signal_pipe[2] = {-1, -1};
// Set before the cluster is stopped: episodes from then on fail for that
// reason alone, so the loop runs no more of them and records none.
std::atomic<bool> stopping{false};

void on_signal(int sig) {
  char c = static_cast<char>(sig);
  if (write(signal_pipe[1], &c, 1) < 0) _exit(128 + sig);
}

void clean_up_on_signals() {
  if (pipe(signal_pipe) != 0) return;
  std::thread([] {
    char sig = 0;
    while (read(signal_pipe[0], &sig, 1) != 1) {
    }
    stopping = true;
    if (testkit::Cluster* c = cluster_to_clean.load()) {
      try {
        c->stop(true);
      } catch (const std::exception&) {
      }
      std::error_code ec;
      fs::remove_all(c->dir(), ec);
    }
    _exit(128 + sig);
  }).detach();
  struct sigaction sa = {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace

class Generative : public TrellisTest {
 protected:
  void SetUp() override {
    TrellisTest::SetUp();
    cluster_to_clean = &shared_cluster();
  }

  // Failing episodes keep their worker log (and, with TRELLIS_GEN_OUT_DIR,
  // their report and shrink) outside the cluster's folder, so they outlive
  // the run; a passing episode's log is removed.
  const std::string out_dir_ = env_text("TRELLIS_GEN_OUT_DIR");

  // Where seed `seed`'s files go: D/seed-S/NAME, or a temporary file.
  fs::path episode_file(uint64_t seed, const std::string& name) const {
    if (!out_dir_.empty()) {
      fs::path dir = fs::path(out_dir_) / ("seed-" + std::to_string(seed));
      fs::create_directories(dir);
      return dir / name;
    }
    return fs::temp_directory_path() /
           fmt::format("trellis-generative-{}-seed-{}-{}", getpid(), seed, name);
  }

  void forget_episode_files(uint64_t seed) const {
    if (out_dir_.empty()) return;
    std::error_code ec;
    fs::remove_all(fs::path(out_dir_) / ("seed-" + std::to_string(seed)), ec);
  }

  // Runs an episode in a fresh database, dropped afterwards; the worker log
  // is removed when the episode passes.
  gen::Outcome run_fresh(const gen::Generated& g, const fs::path& worker_log) {
    std::error_code ec;
    fs::remove(worker_log, ec);
    gen::Outcome outcome;
    try {
      url_ = shared_cluster().create_database("g");
      app_ = pg::Connection::open(url_, {.search_path = "public"});
      gen::EpisodeHooks hooks;
      hooks.url = url_;
      hooks.oracle_diff = [this](const std::string& target) { return oracle_diff(target); };
      hooks.restart_server = [](bool immediate) { shared_cluster().restart(immediate); };
      hooks.worker_log = worker_log.string();
      outcome = gen::run_episode(g, hooks);
    } catch (const std::exception& e) {
      outcome.what = std::string("the episode could not start: ") + e.what();
      outcome.failure = fmt::format("generative failure, seed {} (replay: {})\n{}\n", g.seed,
                                    g.replay_env(), outcome.what);
    }
    app_.reset();
    try {
      auto admin = pg::Connection::open(shared_cluster().url("postgres"));
      admin->exec_script("DROP DATABASE IF EXISTS " + dbname_of(url_) + " WITH (FORCE)");
    } catch (const std::exception&) {
      // The next episode's database is a new one either way.
    }
    if (outcome.failure.empty()) fs::remove(worker_log, ec);
    return outcome;
  }

  // One episode of the run: prints its line; a failure is reported (and
  // written to the out dir).
  gen::Outcome run_episode(const gen::Generated& g) {
    auto started = Clock::now();
    gen::Outcome outcome = run_fresh(g, episode_file(g.seed, "workers.log"));
    // Stopped meanwhile (the cluster is going down): whatever failed failed
    // for that reason, so the episode is neither an outcome nor recorded.
    bool stopped = stopping;
    if (stopped) outcome.failure.clear();
    const std::string& failure = outcome.failure;
    auto secs = std::chrono::duration<double>(Clock::now() - started).count();
    std::printf("seed %llu%s: %zu table(s), %zu transform(s), %zu steps: %s (%.1fs)\n",
                static_cast<unsigned long long>(g.seed),
                g.shrink_path.empty() ? "" : (" [shrink path " + g.shrink_path + "]").c_str(),
                g.schema.tables.size(), g.program.transforms.size(), g.plan.steps.size(),
                stopped ? "stopped" : (failure.empty() ? "ok" : "FAILED"), secs);
    if (env_number("TRELLIS_GEN_VERBOSE").value_or(0) && failure.empty())
      std::printf("%s--- what ran ---\n%s\n", g.describe().c_str(), outcome.log.c_str());
    std::fflush(stdout);
    if (failure.empty()) {
      forget_episode_files(g.seed);
    } else {
      ADD_FAILURE() << failure;
      if (!out_dir_.empty()) write_file(episode_file(g.seed, "report.txt"), failure);
    }
    return outcome;
  }

  static bool shrink_on(bool quick) {
    std::string v = env_text("TRELLIS_GEN_SHRINK");
    return v.empty() ? !quick : v != "0";
  }

  // Shrinks a failing episode within `budget`; prints and keeps the result.
  void shrink(const gen::Generated& g, const gen::Outcome& failure, std::chrono::seconds budget) {
    gen::ShrinkOptions options;
    options.budget = budget;
    options.tries = static_cast<int>(env_number("TRELLIS_GEN_SHRINK_TRIES").value_or(2));
    options.replays = static_cast<int>(env_number("TRELLIS_GEN_SHRINK_REPLAYS").value_or(3));
    std::string match = env_text("TRELLIS_GEN_SHRINK_MATCH");
    options.match = match == "any"         ? gen::Match::any
                    : match == "transform" ? gen::Match::same_transform
                                           : gen::Match::same_failure;
    auto log_of = [&](int run) {
      return episode_file(g.seed, "shrink-run-" + std::to_string(run) + "-workers.log");
    };
    std::string text;
    gen::ShrinkHooks hooks;
    hooks.run = [&](const gen::Generated& candidate, int run) {
      return run_fresh(candidate, log_of(run));
    };
    hooks.discard = [&](const gen::Outcome&, int run) {
      std::error_code ec;
      fs::remove(log_of(run), ec);
    };
    hooks.print = [&](const std::string& line) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
      text += line + "\n";
    };
    gen::ShrinkResult r = gen::shrink(g, failure, options, hooks);
    std::error_code ec;
    std::string exe = fs::read_symlink("/proc/self/exe", ec).string();
    std::string summary = gen::describe_shrink(r, exe);
    std::printf("%s", summary.c_str());
    std::fflush(stdout);
    if (!out_dir_.empty()) write_file(episode_file(g.seed, "shrink.txt"), text + summary);
  }
};

TEST_F(Generative, RandomProgramsEqualTheirOracleUnderFaults) {
  auto shrink_budget = std::chrono::seconds(env_number("TRELLIS_GEN_SHRINK_SECONDS").value_or(300));
  if (auto seed = env_number("TRELLIS_GEN_SEED")) {
    gen::Generated g = gen::generate(*seed);
    try {
      gen::apply_shrink_path(g, env_text("TRELLIS_GEN_SHRINK_PATH"));
    } catch (const std::invalid_argument& e) {
      FAIL() << "TRELLIS_GEN_SHRINK_PATH: " << e.what();
    }
    if (env_number("TRELLIS_GEN_PRINT")) {
      std::printf("%s", g.describe().c_str());  // the program only, no run
      return;
    }
    gen::Outcome outcome = run_episode(g);
    if (!outcome.failure.empty() && shrink_on(false)) shrink(g, outcome, shrink_budget);
    return;
  }
  auto long_seconds = env_number("TRELLIS_GEN_SECONDS");
  bool quick = !long_seconds;
  bool keep_going = env_number("TRELLIS_GEN_KEEP_GOING").value_or(0) != 0;
  auto budget = std::chrono::seconds(
      long_seconds ? *long_seconds : env_number("TRELLIS_GEN_QUICK_SECONDS").value_or(90));
  std::mt19937_64 seeds(std::random_device{}());
  auto start = Clock::now();
  int episodes = 0;
  std::vector<std::pair<gen::Generated, gen::Outcome>> failures;
  for (uint64_t quick_seed = 1; episodes == 0 || Clock::now() - start < budget; ++quick_seed) {
    gen::Generated g = gen::generate(long_seconds ? seeds() % 1000000000000ULL : quick_seed);
    gen::Outcome outcome = run_episode(g);
    // Being stopped: wait for the signal thread to finish and exit.
    while (stopping) std::this_thread::sleep_for(std::chrono::seconds(1));
    ++episodes;
    if (outcome.failure.empty()) continue;
    failures.emplace_back(std::move(g), std::move(outcome));
    if (!keep_going) break;
  }
  // Each failure gets an equal share of what is left of the shrink budget.
  if (shrink_on(quick)) {
    auto shrink_end = Clock::now() + shrink_budget;
    for (size_t i = 0; i < failures.size(); ++i) {
      auto left = std::chrono::duration_cast<std::chrono::seconds>(shrink_end - Clock::now());
      auto share = left / static_cast<int64_t>(failures.size() - i);
      if (share.count() <= 0) {
        std::printf("=== seed %llu not shrunk: the shrink budget is used up ===\n",
                    static_cast<unsigned long long>(failures[i].first.seed));
        continue;
      }
      shrink(failures[i].first, failures[i].second, share);
    }
  }
  std::string failing;
  for (const auto& f : failures) failing += " " + std::to_string(f.first.seed);
  std::printf("generative summary: %d episode(s), %zu failure(s)%s%s\n", episodes, failures.size(),
              failing.empty() ? "" : ", seeds", failing.c_str());
}

}  // namespace trellis::test

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == trellis::gen::kWorkerFlag)
    return trellis::gen::worker_main(argc, argv);
  trellis::test::clean_up_on_signals();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
