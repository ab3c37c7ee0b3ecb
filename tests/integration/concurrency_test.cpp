// Concurrency: several writers hammer a few hot keys (inserts, updates, key
// changes, deletes) while drain threads run and the ring seals every few ms;
// once writes stop, the target must equal its definition.
#include <random>
#include <thread>

#include "support/harness.hpp"

namespace trellis::test {

namespace {

// One writer: `ops` random single-statement transactions over keys 1..hot.
void write_randomly(const std::string& url, int seed, int ops, int hot) {
  auto conn = pg::Connection::open(url, {.search_path = "public"});
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> key(1, hot), kind(0, 9), val(-50, 50);
  for (int i = 0; i < ops; ++i) {
    std::string k = std::to_string(key(rng)), v = std::to_string(val(rng));
    std::string stmt;
    switch (kind(rng)) {
      case 0:
      case 1:
      case 2:
        stmt = "INSERT INTO hot VALUES (" + k + ", " + v + ", 'w" + v +
               "') ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v";
        break;
      case 3:
      case 4:
      case 5:
        stmt = "UPDATE hot SET v = v + " + v + ", label = label || 'x' WHERE id = " + k;
        break;
      case 6:
        stmt = "UPDATE hot SET id = id + " + std::to_string(hot) + " WHERE id = " + k +
               " AND NOT EXISTS (SELECT 1 FROM hot WHERE id = " + k + " + " + std::to_string(hot) +
               ")";
        break;
      case 7:
        stmt = "BEGIN; UPDATE hot SET v = 1000 WHERE id = " + k +
               "; DELETE FROM hot WHERE id = " + k + "; INSERT INTO hot VALUES (" + k +
               ", 7, 'again'); COMMIT";
        break;
      default:
        stmt = "DELETE FROM hot WHERE id = " + k;
    }
    try {
      conn->exec_script(stmt);
    } catch (const std::exception&) {
      conn->exec_script("ROLLBACK");  // a unique clash between writers is the app's own business
    }
  }
}

void run_writers(const std::string& url, int writers, int ops, int hot) {
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) threads.emplace_back(write_randomly, url, 100 + w, ops, hot);
  for (auto& t : threads) t.join();
}

}  // namespace

class Concurrency : public TrellisTest {
 protected:
  void create_hot() {
    sql("CREATE TABLE hot (id int PRIMARY KEY, v int, label text);"
        "INSERT INTO hot SELECT g, g, 'start' FROM generate_series(1, 20) g");
  }
  const char* kDefine =
      "TRANSFORM hot_view FROM hot SELECT v * 2 AS v2, label || '!' AS shout WHERE v % 3 <> 0";
};

TEST_F(Concurrency, FourWritersOnHotKeysWithThreeDrainsConvergeToOracle) {
  create_hot();
  auto t = start(3);
  t->apply(kDefine);
  await_status(*t, "hot_view", "live");
  run_writers(url_, 4, 400, 20);
  await_converged(*t);
  expect_oracle("hot_view");
  EXPECT_GT(query("SELECT count(*) FROM hot_view").get_int(0, 0), 0);
}

TEST_F(Concurrency, BuildStartedMidStreamConvergesToOracle) {
  create_hot();
  sql("INSERT INTO hot SELECT g, g, 'bulk' FROM generate_series(1000, 30000) g");
  auto t = start(3);
  std::thread writers([&] { run_writers(url_, 4, 300, 20); });
  t->apply(kDefine);
  writers.join();
  await_status(*t, "hot_view", "live");
  await_converged(*t);
  expect_oracle("hot_view");
}

TEST_F(Concurrency, TwoProcessesOfWorkersShareTheDrain) {
  create_hot();
  auto first = start(2);
  auto second = start(2, /*staging=*/false);
  EXPECT_THROW(start(1, /*staging=*/true), Error);  // one staging worker per instance
  first->apply(kDefine);
  await_status(*first, "hot_view", "live");
  run_writers(url_, 3, 300, 20);
  await_converged(*second);
  expect_oracle("hot_view");
}

}  // namespace trellis::test
