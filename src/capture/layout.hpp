// What the installed capture of a table was built for: the key, the columns
// its readers read, the layout (the table's leading columns, by place and
// attnum) its triggers name, and the columns its move guard watches. They
// make up the signature stored at install; a signature that differs from the catalog's is
// reinstalled by the reconciler, and the drift check marks a signature stale once the table's
// layout moved under it (a column dropped before or among the ones read), so
// the triggers leave their fallback path again.
#pragma once

#include <string>
#include <vector>

#include "bind/table_description.hpp"
#include "catalog/definition.hpp"
#include "compile/capture.hpp"

namespace trellis::capture {

// Union of the columns the given transforms read of captured table
// `table_id`, by name, in name order.
std::vector<catalog::Column> union_reads(const std::vector<catalog::TransformDef>& readers,
                                         int table_id);

// The table's columns, in attnum order, dropped ones left out.
std::vector<compile::PlacedColumn> placed_columns(const bind::TableDescription& info);

// `moves`: the columns a partitioned table's move guard watches (none when it
// has no guard), so that a partition key added under it (a partitioned
// partition attached) reinstalls the guard for that key too.
std::string capture_signature(const catalog::CapturedTable& table,
                              const std::vector<catalog::Column>& reads,
                              const std::vector<compile::PlacedColumn>& layout,
                              const std::vector<compile::WatchedColumn>& moves = {});

// True when the installed capture (per its stored signature) put a move guard
// on the table.
bool installed_move_guard(const catalog::CapturedTable& table);

// True when the table's columns no longer have the layout the installed
// capture (per its stored signature) names.
bool layout_moved(const catalog::CapturedTable& table, const bind::TableDescription& info);

}  // namespace trellis::capture
