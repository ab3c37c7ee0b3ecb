// ADOPT EXISTING TABLE at define: the existing target compared with the table
// define would create for the definition (created as a probe in pg_temp
// by the same DDL and described the same way, then rolled back), column by
// column and key by key. What differs is refused, each difference named
// with the statement that fixes it; Trellis's own hidden columns, keys and
// indexes the table lacks are what adoption adds; what the user added
// beside them is kept and listed.
#pragma once

#include <string>
#include <vector>

#include "catalog/definition.hpp"
#include "compile/adoption_sql.hpp"
#include "pg/connection.hpp"

namespace trellis::bind {

struct Adoption {
  compile::TargetAdditions additions;
  std::vector<std::string> added_columns;  // names of additions.columns
  std::string note;                        // what was kept and what is added
};

// Runs inside the caller's transaction, which holds the target locked;
// `probe_ddl` creates def's tables under schema pg_temp (the rest of the
// definition unchanged) and is rolled back. Throws trellis::Error
// (validation; not_found when the table is gone) naming every difference.
Adoption plan_adoption(pg::Connection& conn, const catalog::TransformDef& def,
                       const std::vector<std::string>& probe_ddl);

}  // namespace trellis::bind
