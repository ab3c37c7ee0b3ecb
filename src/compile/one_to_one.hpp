// SQL for a 1-1 transform: target DDL, the two-statement re-derive of the keys
// on the current page (lock, then read and write: invariant I1), the build's
// keyset chunks, and the oracle query that tests compare the target against.
#pragma once

#include "compile/transform_sql.hpp"

namespace trellis::compile {

TransformSql compile_one_to_one(const catalog::TransformDef& def);

}  // namespace trellis::compile
