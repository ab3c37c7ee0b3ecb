// Invariant I1 for aggregate group rows folded by one upsert
// (compile/aggregate.cpp, upsert_deltas): when every field is computed from
// running state, a drain page adds each touched group's delta to the group
// row with INSERT ... ON CONFLICT DO UPDATE and takes no placeholder lock
// first. Two pages that change different keys of one group (in different
// key slots, so the slot locks do not order them) must then fold one after
// the other, the second adding its delta to the row the first committed.
// The race is staged with two drain threads over two ready segments: the
// first page folds group 1, then is held open by a second transform's gate
// (transforms of a page run in id order) with the group row locked; the
// second page must wait for that row and, once the first commits, add to it.
// Folding from the second statement's snapshot instead would lose the first
// page's delta, and the oracle would show it.
#include "catalog/ring_geometry.hpp"
#include "compile/key_codec.hpp"
#include "support/child_workers.hpp"
#include "support/gate.hpp"

namespace trellis::test {

class GroupFold : public TrellisTest {};

TEST_F(GroupFold, ASecondPageFoldsIntoTheGroupRowTheFirstCommitted) {
  sql(kFirstGateFunction);
  sql("CREATE TABLE src (id int PRIMARY KEY, v int NOT NULL, grp int NOT NULL)");
  sql("CREATE INDEX ON src (grp)");
  sql("INSERT INTO src SELECT g, g, g % 3 FROM generate_series(1, 50) g");
  {
    auto t = start(2);
    t->apply("TRANSFORM dst FROM src GROUP BY grp SELECT SUM(v) AS total, COUNT(*) AS n");
    t->apply("TRANSFORM gated FROM src SELECT public.first_gate(v) AS v");
    await_status(*t, "dst", "live");
    await_status(*t, "gated", "live");
    await_converged(*t);
  }
  // Key 7 and another key of its group (7 % 3 = 1) in a different ring bucket.
  std::string bucket = compile::key_bucket("ARRAY[id::text]", catalog::kRingBuckets);
  std::string other = query("SELECT id FROM src WHERE grp = 1 AND " + bucket + " <> (SELECT " +
                            bucket + " FROM src WHERE id = 7) ORDER BY id LIMIT 1")
                          .get(0, 0);
  auto staging = start(0);  // seals and promotes segments; nothing drains them
  sql("UPDATE src SET v = -5 WHERE id = 7");
  ASSERT_TRUE(eventually([&] { return ready_buckets() == 1; }, std::chrono::seconds(30)));
  sql("UPDATE src SET v = -6 WHERE id = " + other);
  ASSERT_TRUE(eventually([&] { return ready_buckets() == 2; }, std::chrono::seconds(30)));

  auto gate = hold_gate(url_, kNegativeGate);
  auto drains = start(2, /*staging=*/false);
  bool held = await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory");
  bool waited = held && await_trellis_lock_wait(url_, std::chrono::seconds(30), "transactionid");
  release_gate(*gate, kNegativeGate);
  ASSERT_TRUE(held) << "no page reached the gate";
  EXPECT_TRUE(waited) << "the second page did not wait for the group row the first folded";
  await_converged(*staging);
  expect_oracle("dst");
  expect_oracle("gated");
}

}  // namespace trellis::test
