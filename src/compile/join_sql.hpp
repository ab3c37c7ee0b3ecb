// SQL of a definition's joins (docs/architecture.md, data path step 9): the
// statements by which a drain turns the page's keys of a joined table into
// the source keys they reach. The FROM clause every statement computing
// target rows reads is catalog::TransformDef::from_clause().
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "catalog/definition.hpp"

namespace trellis::compile {

// One statement per join: adds to the page, as keys of the source table,
// the source keys whose rows reach a joined row the page holds a key of.
// The joined table's key is what its ON equates with columns of the tables
// before it, so the walk reads only those tables (inner-joined, back to the
// source), never the joined table itself: a deleted joined row, or one whose
// key changed (capture stages the old key too), still leads to the rows that
// read it. ON equalities over other columns are left out, which can only add
// keys. `first` is the join's captured table id.
// A join that fans out maps differently (join_sql.cpp, map_fanning): through
// the tables that hold its key (HeldRows).
// It records what a change reaches as (source key, fanning key) pairs
// (kFanPairsTable) and adds the source keys the page lacks, which the
// re-derive covers only through their pairs unless some other change makes
// them whole (transform_sql.hpp, kWholeRootsTable): a changed line
// re-derives its own target rows (or ledger entries), not every one of its
// order. Every other mapping adds the keys it reaches as whole ones.
struct JoinedKeyMap {
  int table_id = 0;
  std::string sql;
};
// A table that holds a transform's rows with the keys of the joined rows
// they matched: the target or the ledger (`fan`: the definition's fan and
// held key columns as that table names them), and the matches the WHERE
// rejects (rejected_matches.hpp), which map_joined_keys adds itself.
struct HeldRows {
  std::string table;
  std::vector<catalog::TransformDef::FanColumn> fan;
};
std::vector<JoinedKeyMap> map_joined_keys(const catalog::TransformDef& d, const HeldRows& held);

}  // namespace trellis::compile
