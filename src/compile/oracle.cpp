// Oracle comparison SQL; see oracle.hpp.
#include "compile/oracle.hpp"

#include <fmt/format.h>

#include "compile/one_to_one.hpp"
#include "compile/sql_text.hpp"

namespace trellis::compile {

std::string oracle_diff_sql(const catalog::TransformDef& def, int limit) {
  std::string expected =
      fmt::format("SELECT to_jsonb(__o) AS r FROM ({}) __o", compile_one_to_one(def).oracle_select);
  std::string actual = fmt::format("SELECT to_jsonb(__t) AS r FROM {} __t",
                                   qualified(def.target_schema, def.target_table));
  return fmt::format(
      "(SELECT 'missing' AS side, r::text FROM ({0} EXCEPT ALL {1}) m) UNION ALL "
      "(SELECT 'extra', r::text FROM ({1} EXCEPT ALL {0}) x) ORDER BY 1, 2 LIMIT {2}",
      expected, actual, limit);
}

}  // namespace trellis::compile
