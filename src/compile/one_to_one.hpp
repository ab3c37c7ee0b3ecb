// SQL for a 1-1 transform: target DDL, the two-statement re-derive of the keys
// on the current page (lock, then read and write: invariant I1), the build's
// keyset chunks, and the oracle query that tests compare the target against.
#pragma once

#include "compile/transform_sql.hpp"

namespace trellis::compile {

TransformSql compile_one_to_one(const catalog::TransformDef& def);

// The target as a joined table's change probes it: its fan key columns,
// then its held key columns (join_sql.hpp, map_fanning).
HeldRows one_to_one_held_rows(const catalog::TransformDef& def);

// The writes of a 1-1 definition without fields (the matches a WHERE
// rejects, rejected_matches.hpp) as CTEs named `<prefix>_*`, to run inside
// another statement (in its snapshot): re-deriving the page's keys, filling
// the build range ($1, $2] of a table that holds none of its rows, and
// rewriting that range.
struct OneToOneWrites {
  std::string page;
  std::string range_insert;
  std::string range_rewrite;
};
OneToOneWrites one_to_one_writes(const catalog::TransformDef& def, const std::string& prefix);

// A field build (ALTER TRANSFORM) over a page of the target's own keys: lock
// those rows in key order, then set only `fields` from the current source
// rows. Rows with no source row, and source rows with no target row, are the
// drain's: their changes are in the ring.
std::vector<std::string> one_to_one_field_build_steps(const catalog::TransformDef& def,
                                                      const std::vector<std::string>& fields);

// The drain's steps writing only `fields` (none: only the key, the WHERE and
// the row's presence). Quarantine runs them to find the field a failing key
// fails in.
std::vector<std::string> one_to_one_steps_for(const catalog::TransformDef& def,
                                              const std::vector<std::string>& fields);

// ALTER TABLE of the target for an edit: drop `dropped`, then add `added`
// (fields of `def`, created as define would).
std::string alter_target_columns(const catalog::TransformDef& def,
                                 const std::vector<std::string>& dropped,
                                 const std::vector<std::string>& added);

}  // namespace trellis::compile
