// Invariant I1 by key slots (docs/architecture.md, invariants): two
// re-derives of one key never read and write it at once, because each first
// takes the advisory lock of the key's slot. The race is staged with two
// drain threads over two ready segments that both changed key 7: the first
// thread's re-derive reads the source row and is held open by a field gate
// (only the first evaluation waits); the second thread, re-deriving 7 for
// the other segment, must wait for the first to commit before it reads. For
// an aggregate, a second re-derive that did not wait would read the same old
// ledger entry as the first and fold the same delta into the group again.
#include "support/child_workers.hpp"
#include "support/gate.hpp"

namespace trellis::test {

class KeySlots : public TrellisTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(KeySlots, ASecondRederiveOfAKeyWaitsForTheFirstToCommit) {
  sql(kFirstGateFunction);
  sql("CREATE TABLE src (id int PRIMARY KEY, v int NOT NULL, grp int NOT NULL)");
  sql("CREATE INDEX ON src (grp)");
  sql("INSERT INTO src SELECT g, g, g % 3 FROM generate_series(1, 50) g");
  {
    auto t = start(2);
    t->apply(GetParam());
    await_status(*t, "dst", "live");
    await_converged(*t);
  }
  auto staging = start(0);  // seals and promotes segments; nothing drains them
  sql("UPDATE src SET v = -5 WHERE id = 7");
  ASSERT_TRUE(eventually([&] { return ready_buckets() == 1; }, std::chrono::seconds(30)));
  sql("UPDATE src SET v = -6 WHERE id = 7");
  ASSERT_TRUE(eventually([&] { return ready_buckets() == 2; }, std::chrono::seconds(30)));

  auto gate = hold_gate(url_, kNegativeGate);
  auto drains = start(2, /*staging=*/false);
  bool held = await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory");
  bool waited = held && await_key_slot_wait(url_, std::chrono::seconds(30));
  release_gate(*gate, kNegativeGate);
  ASSERT_TRUE(held) << "no re-derive reached the gate";
  EXPECT_TRUE(waited) << "the second re-derive of key 7 did not wait for the first";
  await_converged(*staging);
  expect_oracle("dst");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, KeySlots,
    ::testing::Values("TRANSFORM dst FROM src SELECT public.first_gate(v) AS v, v * 2 AS twice",
                      "TRANSFORM dst FROM src GROUP BY grp SELECT SUM(v) AS total, COUNT(*) AS n "
                      "WHERE public.first_gate(v) IS NOT NULL"),
    [](const auto& info) { return info.index == 0 ? "OneToOne" : "Aggregate"; });

}  // namespace trellis::test
