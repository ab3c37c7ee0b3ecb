// SQL of a self-check (README, "Auditing a target"): a target compared with
// an independent recompute of its definition by PostgreSQL, page by page in
// key order. The recompute is the definition as a plain SELECT (the oracle's
// rendering, never the drain's or the build's statements), and for an
// aggregate also the running state each group's source rows give (so a
// hidden count or sum that drifted is found even when the visible value
// matches). Values compare as the oracle compares them (compile/oracle).
//
// A page is a range (lo, hi] of the page key: the source key for 1-1
// targets, the group columns for aggregates (NULLs last, as their indexes
// order them); an aggregate without GROUP BY is one page. A page ends at
// the nearer of the target's and the source's `rows`-th key past lo, so
// neither side of one page holds much more than `rows` keys.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "catalog/definition.hpp"

namespace trellis::compile {

struct SelfCheckSql {
  // Every column the target should have, hidden ones included.
  std::vector<std::string> expected_columns;
  // The columns that identify a target row (a divergence's key names them).
  std::vector<std::string> key_columns;
  // $1 = lo (encoded page key, text[]; NULL: from the start), $2 = rows per
  // page -> the page's hi, or no row when the rest is the last page.
  std::string page_bound;
  // $1 = lo, $2 = hi (NULL: open), $3 = most differences to return. The
  // first row is ('rows', ..., keys seen on either side); then differences
  // in key order: (kind missing_row | extra_row | cell, key as a JSON
  // object, column, persisted text, recomputed text, 0, the target row's
  // xmin).
  std::string compare;
};

// `present`: the columns the target has. A column it lacks is left out of
// the comparison (the self-check reports it as missing_column); so are the
// paused columns.
SelfCheckSql compile_self_check(const catalog::TransformDef& d,
                                const std::set<std::string>& present);

}  // namespace trellis::compile
