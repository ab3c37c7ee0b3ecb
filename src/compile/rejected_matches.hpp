// The matches a WHERE rejects under a LEFT JOIN that fans out or is held
// (catalog::TransformDef::rejecting_joins; docs/architecture.md, "Matches a
// WHERE rejects"). Such a WHERE can reject every match of a source row and
// still pass the row without a match; when the last rejected match goes
// away (deleted, moved, its join column changed) that row must appear. A
// change of the joined table finds the source rows its old row matched only
// through a table that holds the match (join_sql.hpp, map_fanning), and the
// target holds only the rows the WHERE passes. So the rejected matches are
// kept beside the target, in `<target>__reject`: the target's key (and held
// key) columns of each joined row the WHERE rejects where such a join
// matched. It is a 1-1 transform of its own over the same FROM with the
// WHERE negated and no fields, written by CTEs of the very statements that
// write the target (or ledger): every re-derive, build range and rebuild,
// so it holds exactly the rejected matches of the snapshot the target's
// rows were computed in.
#pragma once

#include <optional>

#include "catalog/definition.hpp"
#include "compile/join_sql.hpp"
#include "compile/transform_sql.hpp"

namespace trellis::compile {

// The rejected matches of `d` as a 1-1 definition (target rejected_table(),
// the same id, source and joins), or none when d keeps none.
std::optional<catalog::TransformDef> rejected_matches(const catalog::TransformDef& d);

// The table's rows as map_fanning probes them.
HeldRows rejected_held_rows(const catalog::TransformDef& rejected);

// Adds the table to `sql`: its DDL, its re-derive after d's steps (drains,
// build chunks), the build range statements, and its keys to the statements
// that page the keys d holds (after a TRUNCATE, a RESUME's sweep). `held`
// is the table holding d's own rows (its target or its ledger).
void add_rejected_matches(const catalog::TransformDef& d, const std::string& held,
                          TransformSql& sql);

// One statement that makes the table follow `d` at RESUME: creates it when
// d keeps rejected matches and it is missing, drops it when d keeps none.
std::string sync_rejected_matches(const catalog::TransformDef& d);

}  // namespace trellis::compile
