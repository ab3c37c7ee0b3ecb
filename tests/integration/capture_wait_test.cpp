// capture_wait (README, "Operations"; invariant I6 in docs/architecture.md): while another session
// holds a lock that keeps Trellis from installing capture, the transform reports the wait (table,
// lock mode, blocking pids, since), application writers keep going (Trellis waits at most 50 ms per
// attempt, so a writer queued behind it is never held for the other session's whole transaction),
// and once the lock is gone the wait clears and the transform builds and goes live.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "support/harness.hpp"

namespace trellis::test {

using namespace std::chrono_literals;

class CaptureWaitTest : public TrellisTest {};

TEST_F(CaptureWaitTest, WritersKeepMovingWhileAnotherSessionBlocksTheInstallForFiveSeconds) {
  sql("CREATE TABLE cw (id int PRIMARY KEY, v int);"
      "INSERT INTO cw SELECT g, g FROM generate_series(1, 200) g");
  // The other session: an open transaction that wrote row 1 holds ROW
  // EXCLUSIVE on cw, which conflicts with capture's SHARE ROW EXCLUSIVE but
  // not with other writers.
  auto blocker = pg::Connection::open(url_, {.search_path = "public"});
  blocker->exec("BEGIN");
  blocker->exec("UPDATE cw SET v = v WHERE id = 1");
  int blocker_pid = blocker->backend_pid();
  auto held_since = std::chrono::steady_clock::now();

  std::atomic<bool> stop{false};
  std::atomic<long> slowest_us{0};
  std::atomic<int> writes{0};
  std::atomic<int> over_100ms{0};
  std::string writer_error;
  std::thread writer([&] {
    try {
      auto conn = pg::Connection::open(url_, {.search_path = "public"});
      for (int i = 0; !stop; ++i) {
        auto begin = std::chrono::steady_clock::now();
        conn->exec("UPDATE cw SET v = v + 1 WHERE id = " + std::to_string(2 + i % 199));
        long us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now() - begin)
                      .count();
        slowest_us = std::max(slowest_us.load(), us);
        if (us > 100'000) ++over_100ms;
        ++writes;
      }
    } catch (const std::exception& e) {
      writer_error = e.what();
    }
  });

  auto t = start(2);
  t->apply("TRANSFORM cw_t FROM cw SELECT v * 2 AS v2");
  std::optional<CaptureWait> wait;
  ASSERT_TRUE(eventually(
      [&] {
        wait = t->status("cw_t")->capture_wait;
        return wait.has_value();
      },
      30s))
      << "capture_wait never reported";
  EXPECT_EQ(wait->table, "public.cw");
  EXPECT_EQ(wait->lock_mode, "ShareRowExclusiveLock");
  EXPECT_NE(std::find(wait->blocking_pids.begin(), wait->blocking_pids.end(), blocker_pid),
            wait->blocking_pids.end());
  EXPECT_FALSE(wait->since.empty());
  EXPECT_EQ(t->status("cw_t")->status, "waiting_to_backfill");

  // Hold the lock for 5 s in all; the wait stays reported meanwhile.
  ASSERT_TRUE(eventually([&] { return std::chrono::steady_clock::now() - held_since >= 5s; }, 30s));
  EXPECT_TRUE(t->status("cw_t")->capture_wait);
  int writes_while_held = writes;
  blocker->exec("COMMIT");

  await_status(*t, "cw_t", "live");
  EXPECT_FALSE(t->status("cw_t")->capture_wait);
  stop = true;
  writer.join();
  EXPECT_EQ(writer_error, "");
  // Writers were never held for the blocker's 5 s: each of Trellis's
  // attempts gives up after 50 ms, so statements stay under 100 ms (a rare
  // one over it is let pass as scheduling noise on a busy machine, none
  // may come near a second).
  EXPECT_GT(writes_while_held, 50);
  EXPECT_LE(over_100ms.load(), writes / 1000) << over_100ms << " of " << writes << " over 100 ms";
  EXPECT_LT(slowest_us.load(), 1'000'000) << "slowest writer statement: " << slowest_us << " us";
  RecordProperty("slowest_writer_statement_us", std::to_string(slowest_us.load()));
  std::cout << "slowest writer statement while capture waited: " << slowest_us / 1000.0
            << " ms over " << writes << " statements" << std::endl;
  await_converged(*t);
  expect_oracle("cw_t");
}

}  // namespace trellis::test
