// SQL for a GROUP BY transform. A ledger (<target>__ledger) keyed by source
// key holds, for every source row passing WHERE, its group and the columns
// the fields read. A page re-derives in four statements: lock the ledger
// entries, rewrite them from the source (recording the groups touched, old
// and new), lock the touched groups in the target, and recompute those
// groups from the ledger. The source is never rescanned for a group.
#pragma once

#include "compile/transform_sql.hpp"

namespace trellis::compile {

TransformSql compile_aggregate(const catalog::TransformDef& def);

// The encoded group of the row `alias`: the JSON array of the group values
// as one text (compare_group_text), else ARRAY[...] of each value's JSON
// text; NULL-safe and decodable to the columns' types.
std::string encode_group(const catalog::TransformDef& d, const std::string& alias);

// For a self-check (compile/self_check_sql): the definition's grouped
// SELECT over its FROM clause (the oracle's) with the running state
// ("__n", ...) each group's rows give, computed from the source rows, never
// from the ledger; and the group values of every row that passes the WHERE,
// under the group columns' names (`SELECT <groups> FROM ... WHERE ...`).
std::string recompute_with_state(const catalog::TransformDef& d);
std::string group_rows(const catalog::TransformDef& d);

}  // namespace trellis::compile
