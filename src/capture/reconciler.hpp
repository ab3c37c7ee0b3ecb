// Keeps capture triggers in step with the catalog (docs/architecture.md, data path steps 2 and 3).
// Run by the staging worker every tick: installs or widens capture for tables that new or resumed
// transforms read, then moves those transforms to backfilling (a transform reading another's target
// only once that one is live); starts field builds (ALTER TRANSFORM) once capture covers what they
// read and no drain transaction that may hold the old definition is still open; removes capture
// from tables nothing reads any more.
#pragma once

#include <functional>
#include <set>

#include "capture/partitions.hpp"
#include "catalog/lifecycle.hpp"
#include "catalog/store.hpp"
#include "compile/capture.hpp"
#include "pg/connection.hpp"

namespace trellis::capture {

class Reconciler {
 public:
  Reconciler(catalog::Store& store, compile::RingShape ring);
  // Returns true when some transform started backfilling (drains should wake).
  bool reconcile(pg::Connection& conn);
  // False when the last reconcile left work for a later one (a lock not had,
  // a failed install or removal, a build waiting for capture or its fence):
  // the staging worker then reconciles again even if the catalog is as it was.
  bool settled() const { return settled_; }
  // The next tick reconciles even if the catalog is as it was: a partition
  // tree changed (capture/partitions).
  void unsettle() { settled_ = false; }
  PartitionCapture& partitions() { return partitions_; }
  // Test seam: runs right after reconcile has read the transforms, so a test
  // can commit a catalog change inside the window a concurrent define,
  // RESUME or ALTER may land in.
  void set_after_catalog_read(std::function<void()> hook) { after_catalog_read_ = std::move(hook); }

 private:
  // Definitions capture covers: ids[i] at versions[i].
  using Covered = catalog::Versions;
  static void cover(Covered& covered, const std::vector<catalog::TransformDef>& readers);
  // Returns false when the lock could not be had (recorded as capture_wait);
  // sets `started` when transforms waiting on this table began their build.
  bool install(pg::Connection& conn, const catalog::CapturedTable& table,
               const std::vector<catalog::Column>& reads,
               const std::vector<compile::PlacedColumn>& layout,
               const std::vector<compile::WatchedColumn>& moves, const std::string& signature,
               const std::vector<catalog::TransformDef>& readers, bool& started);
  bool start_field_builds(pg::Connection& conn, const Covered& covered);
  bool uninstall(pg::Connection& conn, const catalog::CapturedTable& table);  // false: retry
  void record_wait(pg::Connection& conn, const catalog::CapturedTable& table);
  void record_failure(pg::Connection& conn, const catalog::CapturedTable& table,
                      const std::string& error);

  catalog::Store& store_;
  catalog::Lifecycle lifecycle_;
  compile::RingShape ring_;
  PartitionCapture partitions_;
  bool settled_ = false;
  std::function<void()> after_catalog_read_;
};

}  // namespace trellis::capture
