// What the capture triggers stage for each kind of write, read straight from
// the ring with no worker running: the keys a drain will re-derive, no more
// and no fewer.
#include "support/harness.hpp"

namespace trellis::test {

class Capture : public TrellisTest {
 protected:
  // Defines the transform, waits until it is live, then stops the workers so
  // nothing seals, drains or truncates: every staged row stays in the ring.
  void define_and_stop(const std::string& statement, const std::string& target) {
    auto t = start();
    t->apply(statement);
    await_status(*t, target, "live");
    await_converged(*t);
    t.reset();
  }

  // Keys the statement staged, sorted and joined ("{1004},{4}").
  std::string keys_staged_by(const std::string& statement) {
    const std::string ring =
        "SELECT key FROM trellis.ring_0 UNION ALL SELECT key FROM trellis.ring_1 UNION ALL "
        "SELECT key FROM trellis.ring_2 UNION ALL SELECT key FROM trellis.ring_3";
    sql("DROP TABLE IF EXISTS staged_before; CREATE TEMP TABLE staged_before AS " + ring);
    sql(statement);
    return query("SELECT coalesce(string_agg(key::text, ',' ORDER BY key::text), '') FROM (" +
                 ring + " EXCEPT ALL SELECT key FROM staged_before) k")
        .get(0, 0);
  }
};

// An UPDATE stages a key only when a column some reader reads changed (as
// written, so 1 -> 1.00 counts), stages both keys when it moves a row to a
// new key, and stages each changed key once however many rows it touched.
TEST_F(Capture, UpdateStagesOnlyKeysWhoseReadColumnsChanged) {
  sql("CREATE TABLE src (id int PRIMARY KEY, a numeric, unread int);"
      "INSERT INTO src SELECT g, g, 0 FROM generate_series(1, 100) g");
  define_and_stop("TRANSFORM view1 FROM src SELECT a * 2 AS twice", "view1");

  EXPECT_EQ(keys_staged_by("UPDATE src SET unread = unread + 1"), "")
      << "a column no reader reads changed";
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = a WHERE id <= 50"), "") << "nothing changed";
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = 1.00 WHERE id = 1"), "{1}")
      << "1 -> 1.00 is a change as written";
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = a + 1 WHERE id IN (2, 3)"), "{2},{3}");
  EXPECT_EQ(keys_staged_by("UPDATE src SET id = 1004 WHERE id = 4"), "{1004},{4}")
      << "a moved row stages its old and its new key";
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = NULL WHERE id = 5"), "{5}");
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = NULL WHERE id = 5"), "") << "NULL to NULL";
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = 6, unread = 1 WHERE id BETWEEN 6 AND 7"), "{7}")
      << "row 6 already held 6";
}

}  // namespace trellis::test
