// Capture of partitioned tables and the corrections for partition events
// (docs/architecture.md, "Partitioned sources"). A statement trigger fires
// only on the table its statement names, so every partition under a
// captured root (middles and leaves) carries triggers of its own, rendered
// from its own layout and staging the root's id. ATTACH, CREATE ... PARTITION
// OF, DETACH (also CONCURRENTLY) and DROP fire no trigger: the staging worker
// compares the tree with the recorded partitions, installs capture on new
// ones and corrects for each event by staging the keys the partition holds
// (a new or detached one) into the ring, or, for a dropped one whose keys are
// gone, by rebuilding its readers in place. A TRUNCATE of a partition stages
// its sentinel from its own trigger. Each event is listed by status() as
// `correcting` until the drains are past the keys staged for it.
#pragma once

#include <vector>

#include "catalog/lifecycle.hpp"
#include "catalog/partitions.hpp"
#include "catalog/store.hpp"
#include "compile/capture.hpp"
#include "pg/connection.hpp"

namespace trellis::capture {

// Partition `node` of captured table `root` as the captured table its own
// triggers and functions are rendered for (compile/capture): the root's id
// and key, the partition's name and oid.
catalog::CapturedTable captured_partition(const catalog::CapturedTable& root,
                                          const catalog::PartitionNode& node);

class PartitionCapture {
 public:
  PartitionCapture(catalog::Store& store, compile::RingShape ring);

  // For partitioned captured table `root` with readers, before its own
  // install: installs capture reading `reads` on every partition whose
  // capture was not rendered for them (each in its own transaction under the
  // 50 ms lock timeout, so a writer waits at most that long), and records the
  // partitions that left the tree. A partition new under a root whose
  // capture was already installed opens an `attached` correction in the
  // commit that installs its triggers. False when some lock was not had (the
  // root is then not installed either: retried next tick).
  bool install(pg::Connection& conn, const catalog::CapturedTable& root,
               const std::vector<catalog::Column>& reads);
  // Removes capture from every recorded partition of `root`; false: retry.
  bool uninstall(pg::Connection& conn, const catalog::CapturedTable& root);

  // What the staging worker looks at: whether a tree differs from its
  // records (the reconciler must run), and whether corrections or departed
  // partitions wait (correct() must run).
  struct Attention {
    bool tree_changed = false;
    bool work = false;
  };
  Attention attention(pg::Connection& conn);
  // Stages the keys of corrections not staged yet, removes capture from
  // partitions that left their tree once their keys are staged, and closes
  // the corrections the drains are done with.
  void correct(pg::Connection& conn);

 private:
  bool install_node(pg::Connection& conn, const catalog::CapturedTable& root,
                    const catalog::PartitionNode& node, const std::vector<catalog::Column>& reads,
                    const std::vector<compile::PlacedColumn>& layout, bool attached);
  bool remove_node(pg::Connection& conn, const catalog::CapturedTable& root,
                   const catalog::PartitionNode& node);
  // Returns false when the partition's lock was not had (retried next tick).
  bool stage(pg::Connection& conn, const catalog::CapturedTable& root,
             const catalog::PartitionCorrection& c);

  catalog::Store& store_;
  catalog::Partitions partitions_;
  catalog::Lifecycle lifecycle_;
  compile::RingShape ring_;
};

}  // namespace trellis::capture
