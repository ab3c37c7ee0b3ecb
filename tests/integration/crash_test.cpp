// Crashes and restarts: a worker process killed with SIGKILL in the middle of
// a drain transaction, and PostgreSQL restarted (fast and immediate) while
// changes are in flight. In each case a fresh or reconnecting worker must
// converge to the oracle without losing a change.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "support/child_workers.hpp"

namespace trellis::test {

class Crash : public TrellisTest {
 protected:
  // Forks a process that runs `drains` drain threads until it is killed.
  pid_t fork_drain_process(int drains) {
    return fork_worker_process(options(drains, /*staging=*/false));
  }
};

// The same crash for a 1-1 and a GROUP BY transform (named dst in both).
class CrashShapes : public Crash, public ::testing::WithParamInterface<const char*> {};

TEST_P(CrashShapes, DrainProcessKilledMidTransactionLosesNoChange) {
  sql("CREATE TABLE src (id int PRIMARY KEY, v int, grp int);"
      "CREATE INDEX ON src (grp);"
      "INSERT INTO src SELECT g, g, g % 3 FROM generate_series(1, 200) g");
  pid_t child = fork_drain_process(1);  // before any thread exists in this process
  ASSERT_GT(child, 0);
  ChildGuard guard{child};
  auto staging = start(0);
  staging->apply(GetParam());
  await_status(*staging, "dst", "live");

  // Hold a table lock on the target (no xid, so fences still pass) so the
  // child's drain blocks in the middle of its page transaction.
  auto blocker = pg::Connection::open(url_, {.search_path = "public"});
  blocker->exec("BEGIN");
  blocker->exec("LOCK TABLE dst IN EXCLUSIVE MODE");
  sql("UPDATE src SET v = v * 10, grp = grp + 1 WHERE id <= 50; DELETE FROM src WHERE id > 190;"
      "INSERT INTO src VALUES (500, 5, 7)");
  ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30)));
  kill(child, SIGKILL);
  int wstatus = 0;
  waitpid(child, &wstatus, 0);
  guard.pid = 0;
  EXPECT_TRUE(WIFSIGNALED(wstatus));
  blocker->exec("ROLLBACK");

  auto fresh = start(2, /*staging=*/false);
  await_converged(*fresh);
  expect_oracle("dst");
}

INSTANTIATE_TEST_SUITE_P(
    OneToOneAndAggregate, CrashShapes,
    ::testing::Values("TRANSFORM dst FROM src SELECT v + 1 AS v1",
                      "TRANSFORM dst FROM src GROUP BY grp SELECT COUNT(*) AS n, SUM(v) AS total"),
    [](const auto& info) { return info.index == 0 ? "one_to_one" : "aggregate"; });

class Restart : public TrellisTest, public ::testing::WithParamInterface<bool> {};

TEST_P(Restart, WorkersReconnectAndConvergeAfterServerRestart) {
  bool immediate = GetParam();
  sql("CREATE TABLE src (id int PRIMARY KEY, v int);"
      "INSERT INTO src SELECT g, g FROM generate_series(1, 500) g");
  auto t = start(2);
  t->apply("TRANSFORM dst FROM src SELECT v * 3 AS v3 WHERE v % 7 <> 0");
  await_status(*t, "dst", "live");

  std::atomic<int> committed{0};
  std::atomic<bool> restarted{false};
  // 600 writes in all, however long the server is away (each attempt
  // that fails is made again); bounded by a deadline, not by attempts.
  std::thread writer([&] {
    std::unique_ptr<pg::Connection> conn;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (int i = 0; i < 600 && std::chrono::steady_clock::now() < deadline;) {
      try {
        if (!conn) conn = pg::Connection::open(url_, {.search_path = "public"});
        conn->exec("INSERT INTO src VALUES (" + std::to_string(1000 + i) + ", " +
                   std::to_string(i) + ") ON CONFLICT (id) DO NOTHING");
        conn->exec("UPDATE src SET v = v + 1 WHERE id = " + std::to_string(1 + i % 500));
        ++committed;
        ++i;
      } catch (const std::exception&) {
        conn.reset();  // the server went away; reconnect and go on
        std::this_thread::sleep_for(std::chrono::milliseconds(restarted ? 20 : 2));
      }
    }
  });
  while (committed < 100) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  shared_cluster().restart(immediate);
  restarted = true;
  writer.join();
  app_ = pg::Connection::open(url_, {.search_path = "public"});
  await_converged(*t);
  expect_oracle("dst");
  EXPECT_GT(committed.load(), 100);
}

INSTANTIATE_TEST_SUITE_P(FastAndImmediate, Restart, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "immediate" : "fast"; });

}  // namespace trellis::test
