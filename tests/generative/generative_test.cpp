// The generative correctness suite: random schemas, programs, write streams
// and faults (see episode.hpp), each episode judged by the oracle after
// every quiesce. Modes (environment):
//   (none)                   quick: seeds 1, 2, 3, ... until
//                            TRELLIS_GEN_QUICK_SECONDS (default 90) pass
//   TRELLIS_GEN_SECONDS=N    long: random seeds until N seconds pass
//   TRELLIS_GEN_SEED=S       replay seed S once
//   TRELLIS_GEN_VERBOSE=1    also print the program and what ran of passing episodes
//   TRELLIS_GEN_PRINT=1      with TRELLIS_GEN_SEED: print the program, run nothing
// A failure prints the seed and the whole program.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "generative/episode.hpp"
#include "generative/worker_process.hpp"
#include "support/harness.hpp"

namespace trellis::test {

namespace {

std::optional<uint64_t> env_number(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::stoull(v);
}

std::string dbname_of(const std::string& url) {
  auto at = url.find("dbname=");
  return at == std::string::npos ? "" : url.substr(at + 7, url.find(' ', at) - at - 7);
}

}  // namespace

class Generative : public TrellisTest {
 protected:
  // Outside the cluster's folder, so it outlives a failed run; removed when
  // every episode passed.
  std::string worker_log_ = (std::filesystem::temp_directory_path() /
                             ("trellis-generative-" + std::to_string(getpid()) + "-workers.log"))
                                .string();

  // Runs one seed in a fresh database; returns the failure report or "".
  std::string run_seed(uint64_t seed) {
    url_ = shared_cluster().create_database("g");
    app_ = pg::Connection::open(url_, {.search_path = "public"});
    gen::Generated g = gen::generate(seed);
    gen::EpisodeHooks hooks;
    hooks.url = url_;
    hooks.oracle_diff = [this](const std::string& target) { return oracle_diff(target); };
    hooks.restart_server = [](bool immediate) { shared_cluster().restart(immediate); };
    hooks.worker_log = worker_log_;
    auto started = std::chrono::steady_clock::now();
    gen::Outcome outcome = gen::run_episode(g, hooks);
    const std::string& failure = outcome.failure;
    auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("seed %llu: %zu table(s), %zu transform(s), %zu steps: %s (%.1fs)\n",
                static_cast<unsigned long long>(seed), g.schema.tables.size(),
                g.program.transforms.size(), g.plan.steps.size(), failure.empty() ? "ok" : "FAILED",
                secs);
    if (env_number("TRELLIS_GEN_VERBOSE").value_or(0) && failure.empty())
      std::printf("%s--- what ran ---\n%s\n", g.describe().c_str(), outcome.log.c_str());
    std::fflush(stdout);
    app_.reset();
    if (failure.empty()) {
      auto admin = pg::Connection::open(shared_cluster().url("postgres"));
      admin->exec_script("DROP DATABASE IF EXISTS " + dbname_of(url_) + " WITH (FORCE)");
    }
    return failure;
  }
};

TEST_F(Generative, RandomProgramsEqualTheirOracleUnderFaults) {
  using Clock = std::chrono::steady_clock;
  if (auto seed = env_number("TRELLIS_GEN_SEED"); seed && env_number("TRELLIS_GEN_PRINT")) {
    std::printf("%s", gen::generate(*seed).describe().c_str());  // the program only, no run
    return;
  }
  if (auto seed = env_number("TRELLIS_GEN_SEED")) {
    std::string failure = run_seed(*seed);
    if (!failure.empty()) ADD_FAILURE() << failure;
    return;
  }
  auto long_seconds = env_number("TRELLIS_GEN_SECONDS");
  auto budget = std::chrono::seconds(
      long_seconds ? *long_seconds : env_number("TRELLIS_GEN_QUICK_SECONDS").value_or(90));
  std::mt19937_64 seeds(std::random_device{}());
  auto start = Clock::now();
  int episodes = 0;
  for (uint64_t quick = 1; episodes == 0 || Clock::now() - start < budget; ++quick) {
    uint64_t seed = long_seconds ? seeds() % 1000000000000ULL : quick;
    std::string failure = run_seed(seed);
    ++episodes;
    if (!failure.empty()) FAIL() << failure;
  }
  std::printf("%d episode(s) passed\n", episodes);
  std::filesystem::remove(worker_log_);
}

}  // namespace trellis::test

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == trellis::gen::kWorkerFlag)
    return trellis::gen::worker_main(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
