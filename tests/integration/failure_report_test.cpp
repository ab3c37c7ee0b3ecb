// Hold-ups that have no quarantine yet are still reported: a build chunk or
// a drain page that keeps failing shows as backfill_failure / drain_failure
// with the error and SQLSTATE, retries with backoff, and clears once the
// cause is fixed; the application's writes never fail.
#include <thread>

#include "support/harness.hpp"

namespace trellis::test {

class FailureReport : public TrellisTest {
 protected:
  // Polls status until `pred` holds; fails the test on timeout.
  template <typename Pred>
  Status await_status_where(Trellis& t, const std::string& target, Pred pred) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      auto s = t.status(target);
      if (s && pred(*s)) return *s;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "status of " << target << " never matched";
    return {};
  }
};

TEST_F(FailureReport, FailingBuildChunkIsReportedAndRetriedUntilFixed) {
  sql("CREATE TABLE src (id int PRIMARY KEY, v int);"
      "INSERT INTO src SELECT g, g FROM generate_series(1, 50) g; UPDATE src SET v = 0 WHERE id = "
      "7");
  auto t = start(1);
  t->apply("TRANSFORM inv FROM src SELECT 100 / v AS q");
  auto s =
      await_status_where(*t, "inv", [](const Status& s) { return s.backfill_failure.has_value(); });
  EXPECT_EQ(s.status, "backfilling");
  ASSERT_TRUE(s.backfill_failure);
  EXPECT_NE(s.backfill_failure->error.find("division by zero"), std::string::npos);
  EXPECT_NE(s.backfill_failure->chunk.find("source keys"), std::string::npos);
  EXPECT_FALSE(s.backfill_failure->next_retry_at.empty());
  sql("UPDATE src SET v = 1 WHERE id = 7");
  await_status(*t, "inv", "live");
  EXPECT_FALSE(t->status("inv")->backfill_failure);
  await_converged(*t);
  expect_oracle("inv");
}

TEST_F(FailureReport, FailingDrainPageIsReportedWithSqlstateAndClearsWhenFixed) {
  sql("CREATE TABLE src (id int PRIMARY KEY, v int); INSERT INTO src VALUES (1, 1), (2, 2)");
  auto t = start(1);
  t->apply("TRANSFORM inv FROM src SELECT 100 / v AS q");
  await_status(*t, "inv", "live");
  sql("INSERT INTO src VALUES (3, 0)");  // the application's write succeeds
  auto s =
      await_status_where(*t, "inv", [](const Status& s) { return s.drain_failure.has_value(); });
  ASSERT_TRUE(s.drain_failure);
  EXPECT_EQ(s.drain_failure->sqlstate, "22012");
  EXPECT_EQ(s.drain_failure->table, "public.src");
  EXPECT_EQ(s.status, "live");
  sql("UPDATE src SET v = 4 WHERE id = 3");
  await_converged(*t);
  expect_oracle("inv");
  await_status_where(*t, "inv", [](const Status& s) { return !s.drain_failure.has_value(); });
}

}  // namespace trellis::test
