// Races between the staging worker's reconcile pass and statements that
// commit while it runs. The pass reads the transforms once, installs capture
// for what those read, and starts their builds; a transform that commits
// after that read must not start its build on capture that does not cover
// its columns (its writes to those columns would never reach the target).
// The window is forced with the reconciler's test seam, so these run the
// same interleaving every time.
#include "capture/reconciler.hpp"
#include "catalog/store.hpp"
#include "support/harness.hpp"

namespace trellis::test {

class ReconcileRace : public TrellisTest {
 protected:
  // One reconcile pass on its own connection; `during` runs right after the
  // pass has read the transforms.
  void reconcile_with(const std::function<void()>& during) {
    catalog::Store store("trellis");
    capture::Reconciler reconciler(store, {"trellis"});
    reconciler.set_after_catalog_read(during);
    auto conn = pg::Connection::open(url_);
    reconciler.reconcile(*conn);
  }

  std::string status_of(Trellis& t, const std::string& target) {
    auto s = t.status(target);
    return s ? s->status : "absent";
  }
};

// d1 reads only v3, so the first pass installs capture for (id, v3). d2,
// defined inside the pass, reads g0 and v1: it stays waiting_to_backfill
// until a pass installs capture covering those, and an UPDATE of v1 made in
// between reaches d2 (its build reads after that install).
TEST_F(ReconcileRace, TransformDefinedDuringAPassWaitsForCaptureOfItsColumns) {
  sql("CREATE TABLE s0 (id int PRIMARY KEY, g0 int, v1 bigint, v3 bigint);"
      "INSERT INTO s0 SELECT i, i % 3, i * 10, i FROM generate_series(1, 30) i");
  auto api = start(0, false);  // no workers: every step below is explicit
  api->apply("TRANSFORM d1 FROM s0 SELECT v3 AS f1");
  reconcile_with([&] {
    api->apply(
        "TRANSFORM d2 FROM s0 GROUP BY g0 WITHOUT SOURCE INDEX SELECT VAR_POP(v1) AS spread, "
        "COUNT(*) AS n");
  });
  EXPECT_EQ(status_of(*api, "d1"), "backfilling");
  EXPECT_EQ(status_of(*api, "d2"), "waiting_to_backfill")
      << "d2 was defined after the pass read the catalog; capture does not cover v1 and g0 yet";

  // Builds run now, with no staging worker: only what is backfilling builds.
  auto drains = start(1, false);
  await_status(*drains, "d1", "live");
  // Not captured for d2 yet (capture reads id and v3 only); its build, which
  // has not read s0, must see it.
  sql("UPDATE s0 SET v1 = NULL WHERE id = 3; UPDATE s0 SET v1 = 7, g0 = 1 WHERE id = 4");
  drains.reset();

  auto workers = start();
  await_status(*workers, "d2", "live");
  sql("UPDATE s0 SET v1 = v1 + 1 WHERE id IN (5, 6)");
  await_converged(*workers);
  expect_oracle("d1");
  expect_oracle("d2");
}

// An ALTER TRANSFORM that commits inside a pass adds a field reading a column
// capture does not cover yet: its field build waits for a pass that covers it.
TEST_F(ReconcileRace, FieldAddedDuringAPassWaitsForCaptureOfItsColumns) {
  sql("CREATE TABLE s0 (id int PRIMARY KEY, a int, b int);"
      "INSERT INTO s0 SELECT i, i, i FROM generate_series(1, 30) i");
  {
    auto t = start();
    t->apply("TRANSFORM d1 FROM s0 SELECT a AS fa");
    await_status(*t, "d1", "live");
    await_converged(*t);
  }
  auto api = start(0, false);
  reconcile_with([&] { api->apply("ALTER TRANSFORM d1 ADD b * 2 AS fb"); });
  auto phase = query("SELECT build_phase FROM trellis.transforms WHERE target_table = 'd1'");
  EXPECT_EQ(phase.get(0, 0), "awaiting_capture")
      << "the field build may not start before capture covers b";

  sql("UPDATE s0 SET b = -b WHERE id <= 10");  // not captured for fb yet

  auto workers = start();
  await_status(*workers, "d1", "live");
  sql("UPDATE s0 SET b = b + 100 WHERE id > 25");
  await_converged(*workers);
  expect_oracle("d1");
}

}  // namespace trellis::test
