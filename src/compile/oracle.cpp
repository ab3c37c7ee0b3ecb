// Oracle comparison SQL; see oracle.hpp.
#include "compile/oracle.hpp"

#include <fmt/format.h>

#include "compile/sql_text.hpp"
#include "compile/transform_sql.hpp"

namespace trellis::compile {

std::string oracle_diff_sql(const catalog::TransformDef& def, int limit) {
  auto sql = compile_transform(def);
  std::string expected = fmt::format("SELECT to_jsonb(__o) AS r FROM ({}) __o", sql.oracle_select);
  const std::string& actual = sql.target_rows_json;
  return fmt::format(
      "(SELECT 'missing' AS side, r::text FROM ({0} EXCEPT ALL {1}) m) UNION ALL "
      "(SELECT 'extra', r::text FROM ({1} EXCEPT ALL {0}) x) ORDER BY 1, 2 LIMIT {2}",
      expected, actual, limit);
}

}  // namespace trellis::compile
