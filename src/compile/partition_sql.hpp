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

// INSERT of one ring row per key of the rows in `partition` (a partitioned
// middle's: all of its partitions', which were away with it) into ring slot
// `slot`, under `root`'s id and with its key columns.
std::string stage_partition_keys(const catalog::CapturedTable& root, const std::string& partition,
                                 const RingShape& ring, int slot);

// INSERT of one ring row, under captured table `table_id`, per distinct
// source key `key` that the rows of `held_from` (TransformSql::held_keys_from)
// hold and that satisfy `constraint` (a partition constraint over the key's
// columns, unqualified): the keys a transform holds that a partition held.
std::string stage_held_keys(int table_id, const std::vector<catalog::Column>& key,
                            const std::string& held_from, const std::string& constraint,
                            const RingShape& ring, int slot);

}  // namespace trellis::compile
