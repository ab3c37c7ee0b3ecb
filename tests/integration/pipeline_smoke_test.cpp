// End-to-end smoke tests of the 1-1 pipeline: define, build, live changes.
#include "support/harness.hpp"

namespace trellis::test {

class PipelineSmoke : public TrellisTest {
 protected:
  // base -> hop1 (1-1) -> hop2 (1-1 over hop1), both live and converged; the
  // workers that built them are stopped again.
  void define_two_hop_chain() {
    sql("CREATE TABLE base (id int PRIMARY KEY, v int);"
        "INSERT INTO base SELECT g, g FROM generate_series(1, 50) g");
    auto t = start();
    t->apply("TRANSFORM hop1 FROM base SELECT v + 1 AS w");
    await_status(*t, "hop1", "live");
    t->apply("TRANSFORM hop2 FROM hop1 SELECT w * 2 AS x");
    await_status(*t, "hop2", "live");
    await_converged(*t);
  }

  // big (60k rows) -> big_view (1-1), live and converged: a single UPDATE of
  // every row is then a segment large enough for a page index.
  std::unique_ptr<Trellis> define_big_view() {
    sql("CREATE TABLE big (id int PRIMARY KEY, v int);"
        "INSERT INTO big SELECT g, g FROM generate_series(1, 60000) g");
    auto t = start();
    t->apply("TRANSFORM big_view FROM big SELECT v + 1 AS w");
    await_status(*t, "big_view", "live");
    await_converged(*t);
    return t;
  }
};

TEST_F(PipelineSmoke, BuildsExistingRowsThenFollowsInsertsUpdatesDeletes) {
  sql("CREATE TABLE orders (id int PRIMARY KEY, amount numeric, note text);"
      "INSERT INTO orders SELECT g, g * 1.5, 'n' || g FROM generate_series(1, 100) g");
  auto t = start();
  auto applied =
      t->apply("TRANSFORM doubled FROM orders SELECT amount * 2 AS twice, upper(note) AS loud");
  EXPECT_EQ(applied.status, "waiting_to_backfill");
  await_status(*t, "doubled", "live");
  expect_oracle("doubled");
  sql("INSERT INTO orders VALUES (101, 7, 'x'); UPDATE orders SET amount = 0 WHERE id <= 10;"
      "DELETE FROM orders WHERE id BETWEEN 50 AND 60");
  await_converged(*t);
  expect_oracle("doubled");
  EXPECT_EQ(query("SELECT count(*) FROM doubled").get_int(0, 0), 90);
}

}  // namespace trellis::test

namespace trellis::test {

// request_backfill rebuilds every reader of a table in place: a target
// edited by hand (a row changed, one deleted, one added) matches its
// definition again, for a 1-1 and an aggregate reader.
TEST_F(PipelineSmoke, RequestBackfillRebuildsTamperedTargetsInPlace) {
  sql("CREATE TABLE src (id int PRIMARY KEY, g int, v int); CREATE INDEX ON src (g);"
      "INSERT INTO src SELECT x, x % 4, x FROM generate_series(1, 300) x");
  auto t = start(2);
  t->apply("TRANSFORM view1 FROM src SELECT v * 2 AS v2");
  t->apply("TRANSFORM tot FROM src GROUP BY g SELECT SUM(v) AS s, MAX(v) AS m");
  await_status(*t, "view1", "live");
  await_status(*t, "tot", "live");
  sql("UPDATE view1 SET v2 = -1 WHERE id = 5; DELETE FROM view1 WHERE id = 6;"
      "INSERT INTO view1 (id, v2) VALUES (999, 1); UPDATE tot SET s = 0 WHERE g = 1");
  EXPECT_NE(oracle_diff("view1"), "");
  EXPECT_EQ(t->request_backfill("src"), 2);
  await_status(*t, "view1", "live");
  await_status(*t, "tot", "live");
  await_converged(*t);
  expect_oracle("view1");
  expect_oracle("tot");
  EXPECT_THROW(t->request_backfill("no_such_table"), Error);
}

}  // namespace trellis::test

namespace trellis::test {

// A segment holding a large backlog (one 60k-row UPDATE) gets a page index on
// its slot when it is promoted, so drain pages read keys in order instead of
// scanning the slot; the index is gone once the slot is retired, so captured
// writes never maintain it. Small segments (the live steady state) get none.
TEST_F(PipelineSmoke, LargeSegmentGetsAPageIndexUntilItsSlotIsRetired) {
  auto page_indexes = [&] {
    return query("SELECT count(*) FROM pg_indexes WHERE indexname ~ '^ring_[0-9]+_page$'")
        .get_int(0, 0);
  };
  auto t = define_big_view();
  sql("UPDATE big SET v = v + 1 WHERE id <= 10");
  await_converged(*t);
  EXPECT_EQ(page_indexes(), 0) << "a small segment needs no index";
  t.reset();

  auto staging = start(0);  // seals and promotes; nothing drains
  sql("UPDATE big SET v = v * 3");
  EXPECT_TRUE(eventually([&] { return page_indexes() == 1; }, std::chrono::seconds(30)))
      << "the promoted 60k-row segment was not indexed";
  staging.reset();

  t = start(2);
  await_converged(*t);
  expect_oracle("big_view");
  EXPECT_TRUE(eventually([&] { return page_indexes() == 0; }, std::chrono::seconds(30)))
      << "the page index outlived its segment";
}

// A large segment that an earlier version promoted has a page index in the
// earlier key order and bucket cursors in that order. Migration 0009
// rebuilds the index in the new order and sends every unfinished bucket back
// to its first page, so no key is skipped: here the cursors are set as
// though half of each bucket had been drained (nothing was), and the keys
// the new order puts before such a cursor would stay stale if it were kept.
TEST_F(PipelineSmoke, APageIndexAndCursorsOfTheEarlierKeyOrderAreRedoneByTheMigration) {
  auto t = define_big_view();
  t.reset();
  auto staging = start(0);  // seals and promotes; nothing drains
  sql("UPDATE big SET v = v * 3");
  auto indexed_slot = [&] {
    auto r = query(
        "SELECT substring(indexname from '^ring_([0-9]+)_page$') FROM pg_indexes WHERE "
        "schemaname = 'trellis' AND indexname ~ '^ring_[0-9]+_page$'");
    return r.rows() ? r.get(0, 0) : std::string();
  };
  ASSERT_TRUE(eventually([&] { return !indexed_slot().empty(); }, std::chrono::seconds(30)));
  staging.reset();
  std::string slot = indexed_slot();
  sql("DROP INDEX trellis.ring_" + slot + "_page");
  sql("CREATE INDEX ring_" + slot + "_page ON trellis.ring_" + slot +
      " (bucket, (ARRAY[tbl::text] || key)) WHERE key IS NOT NULL");
  sql("UPDATE trellis.buckets SET cursor = ARRAY[(SELECT min(id)::text FROM "
      "trellis.captured_tables), '30000'] WHERE NOT done");

  rerun_migration(9);
  EXPECT_EQ(query("SELECT count(*) FROM trellis.buckets WHERE NOT done AND cursor IS NOT NULL")
                .get_int(0, 0),
            0);
  EXPECT_NE(query("SELECT indexdef FROM pg_indexes WHERE schemaname = 'trellis' AND indexname = "
                  "'ring_" +
                  slot + "_page'")
                .get(0, 0)
                .find("COLLATE \"C\", key)"),
            std::string::npos)
      << "the page index was not rebuilt in the new order";
  t = start(2);
  await_converged(*t);
  expect_oracle("big_view");
}

}  // namespace trellis::test

namespace trellis::test {

// A drain page that writes to a captured target asks the staging worker for
// an early tick, so a chain's next hop is sealed and drained without waiting
// for the regular tick (here ten minutes: only the tick at start happens).
TEST_F(PipelineSmoke, ChainsNextHopIsSealedWithoutWaitingForTheTick) {
  define_two_hop_chain();
  sql("UPDATE base SET v = v + 100 WHERE id <= 10");
  auto o = options();
  o.tick = std::chrono::minutes(10);
  auto t = Trellis::connect(o);
  // hop2 agrees with its definition over the updated hop1 only once both
  // hops have gone through.
  EXPECT_TRUE(eventually([&] { return oracle_diff("hop1").empty() && oracle_diff("hop2").empty(); },
                         std::chrono::seconds(30)))
      << "the second hop waited for the next regular tick";
  EXPECT_EQ(query("SELECT count(*) FROM hop2 WHERE x > 200").get_int(0, 0), 10);
}

// A wait counts a segment whose buckets are all done as drained without
// waiting for the staging worker to mark it so on its next tick, and follows
// the chain through the segment its drains wrote into, which the buckets
// record until then. Staging runs alone with a long tick (a drain of another
// process does not wake it), so the second hop's change waits a whole tick
// in the active segment while the first hop's segment is already done: a
// wait that stopped at the first hop would return with hop2 behind.
TEST_F(PipelineSmoke, AwaitFollowsAChainBeforeItsSegmentsAreMarkedDrained) {
  define_two_hop_chain();
  auto o = options(0, true);
  o.tick = std::chrono::milliseconds(500);
  auto staging = Trellis::connect(o);
  auto drains = start(2, /*staging=*/false);
  for (int round = 0; round < 3; ++round) {
    sql("UPDATE base SET v = v + 100 WHERE id <= 10");
    await_converged(*drains, std::chrono::seconds(30));
    EXPECT_EQ(oracle_diff("hop1"), "") << "round " << round;
    EXPECT_EQ(oracle_diff("hop2"), "") << "round " << round << ": the wait stopped at hop1";
  }
}

}  // namespace trellis::test
