// test_reset (api/test_reset.cpp): what an application's test suite does
// between tests — a target edited by hand, fixtures loaded with the capture
// triggers disabled (in one transaction, so no check can ever see them
// disabled), triggers left disabled, a target truncated — leaves targets that
// differ from their definitions; one test_reset brings every transform back to
// live and to the oracle, says what it repaired, and leaves an operator's
// PAUSE alone.
#include "support/harness.hpp"

namespace trellis::test {

class TestReset : public TrellisTest {
 protected:
  void SetUp() override {
    TrellisTest::SetUp();
    sql("CREATE TABLE tr_src (id int PRIMARY KEY, g int NOT NULL, v int); CREATE INDEX ON tr_src "
        "(g); INSERT INTO tr_src SELECT x, x % 5, x FROM generate_series(1, 200) x");
  }
};

TEST_F(TestReset, RepairsWritesCaptureDidNotSeeAndLeavesAnOperatorsPause) {
  auto t = start(2);
  t->apply("TRANSFORM tr_view FROM tr_src SELECT v * 2 AS v2");
  t->apply("TRANSFORM tr_sum FROM tr_src GROUP BY g SELECT SUM(v) AS s, COUNT(*) AS n");
  t->apply("TRANSFORM tr_held FROM tr_src SELECT v AS v");
  await_status(*t, "tr_view", "live");
  t->apply("TRANSFORM tr_chain FROM tr_view SELECT v2 + 1 AS v3");
  for (const char* target : {"tr_sum", "tr_held", "tr_chain"}) await_status(*t, target, "live");
  t->apply("PAUSE TRANSFORM tr_held");
  const std::vector<std::string> readers = {"public.tr_view", "public.tr_sum"};

  // A hand edit of a target: nothing captures it; the reset rebuilds in place.
  sql("DELETE FROM tr_view WHERE id <= 10; UPDATE tr_sum SET s = 0");
  await_converged(*t);
  EXPECT_NE(oracle_diff("tr_sum"), "");
  auto r = t->test_reset(std::chrono::seconds(60));
  EXPECT_TRUE(r.disrupted.empty());
  EXPECT_TRUE(r.resumed.empty());
  EXPECT_EQ(r.rebuilt,
            (std::vector<std::string>{"public.tr_view", "public.tr_sum", "public.tr_chain"}));
  EXPECT_EQ(r.left_paused, std::vector<std::string>{"public.tr_held"});
  for (const char* target : {"tr_view", "tr_sum", "tr_chain"}) {
    EXPECT_EQ(t->status(target)->status, "live") << target;
    expect_oracle(target);
  }
  EXPECT_EQ(t->status("tr_held")->status, "paused");

  // A fixture load around capture in one transaction, so that no check ever
  // sees the triggers disabled; ENABLE TRIGGER USER leaves them enabled for
  // origin sessions only, which the reset finds as a disruption.
  sql("BEGIN; ALTER TABLE tr_src DISABLE TRIGGER USER; INSERT INTO tr_src SELECT x, x % 7, x FROM "
      "generate_series(201, 300) x; UPDATE tr_src SET v = v + 1000 WHERE id <= 50; DELETE FROM "
      "tr_src WHERE id BETWEEN 51 AND 60; ALTER TABLE tr_src ENABLE TRIGGER USER; COMMIT");
  r = t->test_reset(std::chrono::seconds(60));
  EXPECT_EQ(r.disrupted, readers);
  EXPECT_EQ(r.resumed, readers);
  EXPECT_EQ(r.rebuilt, std::vector<std::string>{"public.tr_chain"});
  EXPECT_EQ(r.left_paused, std::vector<std::string>{"public.tr_held"});
  for (const char* target : {"tr_view", "tr_sum", "tr_chain"}) {
    EXPECT_EQ(t->status(target)->status, "live") << target;
    expect_oracle(target);
  }

  // Triggers left disabled, and the target truncated by hand: the readers
  // resumed with capture reinstalled, and later writes captured again.
  sql("ALTER TABLE tr_src DISABLE TRIGGER USER; INSERT INTO tr_src VALUES (1000, 1, 1); TRUNCATE "
      "tr_view");
  r = t->test_reset(std::chrono::seconds(60));
  EXPECT_EQ(r.disrupted, readers);
  EXPECT_EQ(r.resumed, readers);
  sql("UPDATE tr_src SET v = -v WHERE id <= 20; DELETE FROM tr_src WHERE id = 1000");
  await_converged(*t);
  for (const char* target : {"tr_view", "tr_sum", "tr_chain"}) {
    EXPECT_EQ(t->status(target)->status, "live") << target;
    expect_oracle(target);
  }
}

TEST_F(TestReset, NeedsRunningWorkers) {
  auto t = start(0, false);
  t->apply("TRANSFORM tr_view FROM tr_src SELECT v * 2 AS v2");
  try {
    t->test_reset(std::chrono::seconds(5));
    ADD_FAILURE() << "test_reset ran without workers";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::validation);
    EXPECT_NE(std::string(e.what()).find("needs a running staging worker and drain workers"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace trellis::test
