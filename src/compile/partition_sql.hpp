// SQL of the corrections for partition events (docs/architecture.md,
// "Partitioned sources"): the keys a partition holds, staged into the ring
// under its root's captured-table id as if each had just changed, so the
// drains re-derive them through the ordinary path (and park them for a
// transform that is building).
#pragma once

#include <string>

#include "catalog/definition.hpp"
#include "compile/capture.hpp"

namespace trellis::compile {

// The keys a transform holds: the rows of `from` (TransformSql::
// held_keys_from) under the source key `key`'s column names.
struct HeldKeys {
  std::vector<catalog::Column> key;
  std::string from;
};

// INSERT of one ring row per distinct key, under `root`'s id, into ring
// slot `slot`: the keys of the rows in `partition` (when not empty; a
// partitioned middle's are all of its partitions', which were away with
// it), and the keys each of `held` holds that satisfy `constraint` (a
// partition constraint over the key's columns, unqualified). A key in
// several of them is staged once.
std::string stage_partition_keys(const catalog::CapturedTable& root, const std::string& partition,
                                 const std::vector<HeldKeys>& held, const std::string& constraint,
                                 const RingShape& ring, int slot);

}  // namespace trellis::compile
