// End-to-end smoke tests of the 1-1 pipeline: define, build, live changes.
#include "support/harness.hpp"

namespace trellis::test {

class PipelineSmoke : public TrellisTest {};

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
