// Hold-ups with nothing to charge are reported: a build chunk or a drain
// page that keeps failing on something no single key causes (here, the
// target's column renamed under Trellis) shows as backfill_failure /
// drain_failure with the error (and SQLSTATE), retries with backoff, and
// clears once the cause is fixed; the application's writes never fail.
// Failures one key causes are quarantined instead (quarantine_test.cpp).
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
      "INSERT INTO src SELECT g, g FROM generate_series(1, 50) g");
  auto idle = start(0);  // capture and catalog only: nothing builds yet
  idle->apply("TRANSFORM inv FROM src SELECT 100 / v AS q");
  sql("ALTER TABLE inv RENAME COLUMN q TO q_moved");
  auto t = start(1, false);  // drain threads join; the first handle stages
  auto s =
      await_status_where(*t, "inv", [](const Status& s) { return s.backfill_failure.has_value(); });
  EXPECT_EQ(s.status, "backfilling");
  ASSERT_TRUE(s.backfill_failure);
  EXPECT_NE(s.backfill_failure->error.find("q"), std::string::npos);
  EXPECT_NE(s.backfill_failure->chunk.find("source keys"), std::string::npos);
  EXPECT_FALSE(s.backfill_failure->next_retry_at.empty());
  EXPECT_FALSE(s.held_keys);  // nothing was charged
  sql("ALTER TABLE inv RENAME COLUMN q_moved TO q");
  await_status(*t, "inv", "live");
  EXPECT_FALSE(t->status("inv")->backfill_failure);
  await_converged(*t);
  expect_oracle("inv");
}

// The same for an aggregate, whose ledger ranges succeed and whose group
// ranges fail: the rest of that phase goes by chunks of groups, which report
// the failure and retry until it is fixed.
TEST_F(FailureReport, FailingGroupRangeIsReportedAndRetriedUntilFixed) {
  sql("CREATE TABLE src (id int PRIMARY KEY, grp int, v int); CREATE INDEX ON src (grp);"
      "INSERT INTO src SELECT g, g % 7, g FROM generate_series(1, 500) g");
  auto idle = start(0);
  idle->apply("TRANSFORM tot FROM src GROUP BY grp SELECT SUM(v) AS total, COUNT(*) AS n");
  sql("ALTER TABLE tot RENAME COLUMN total TO total_moved");
  auto t = start(2, false);
  auto s =
      await_status_where(*t, "tot", [](const Status& s) { return s.backfill_failure.has_value(); });
  EXPECT_EQ(s.status, "backfilling");
  ASSERT_TRUE(s.backfill_failure);
  EXPECT_NE(s.backfill_failure->error.find("total"), std::string::npos);
  EXPECT_EQ(s.backfill_failure->chunk.rfind("groups after", 0), 0u) << s.backfill_failure->chunk;
  EXPECT_EQ(query("SELECT build_phase FROM trellis.transforms").get(0, 0), "group_ranges");
  EXPECT_EQ(query("SELECT count(*) FROM tot__ledger").get_int(0, 0), 500);  // ledger ranges done
  sql("ALTER TABLE tot RENAME COLUMN total_moved TO total");
  await_status(*t, "tot", "live");
  EXPECT_FALSE(t->status("tot")->backfill_failure);
  await_converged(*t);
  expect_oracle("tot");
}

TEST_F(FailureReport, FailingDrainPageIsReportedWithSqlstateAndClearsWhenFixed) {
  sql("CREATE TABLE src (id int PRIMARY KEY, v int); INSERT INTO src VALUES (1, 1), (2, 2)");
  auto t = start(1);
  t->apply("TRANSFORM inv FROM src SELECT 100 / v AS q");
  await_status(*t, "inv", "live");
  sql("ALTER TABLE inv RENAME COLUMN q TO q_moved");
  sql("INSERT INTO src VALUES (3, 4)");  // the application's write succeeds
  auto s =
      await_status_where(*t, "inv", [](const Status& s) { return s.drain_failure.has_value(); });
  ASSERT_TRUE(s.drain_failure);
  EXPECT_EQ(s.drain_failure->sqlstate, "42703");
  EXPECT_EQ(s.drain_failure->table, "public.src");
  EXPECT_EQ(s.status, "live");
  EXPECT_FALSE(s.held_keys);
  sql("ALTER TABLE inv RENAME COLUMN q_moved TO q");
  await_converged(*t);
  expect_oracle("inv");
  await_status_where(*t, "inv", [](const Status& s) { return !s.drain_failure.has_value(); });
}

}  // namespace trellis::test
