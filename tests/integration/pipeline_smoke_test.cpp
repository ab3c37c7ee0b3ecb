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
