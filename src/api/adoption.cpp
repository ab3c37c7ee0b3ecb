// ADOPT EXISTING TABLE inside define's transaction: lock the existing target,
// compare it with the table define would create (bind/adoption), add what
// Trellis needs of its own, and say what was kept; and DROP TRANSFORM of an
// adopted target, which leaves the table in place.
#include "bind/adoption.hpp"

#include <fmt/format.h>

#include "api/instance.hpp"
#include "compile/adoption_sql.hpp"
#include "compile/transform_sql.hpp"
#include "pg/lock_timeout.hpp"
#include "pg/sql_error.hpp"

namespace trellis::api {

std::string adopt_target(pg::Connection& conn, catalog::TransformDef& def) {
  // The table is the application's: like any DDL Trellis runs on a user
  // table, the lock waits at most kShortLockTimeout (DESIGN I6).
  pg::set_local_lock_timeout(conn);
  try {
    conn.exec(compile::lock_adopted_target(def));
  } catch (const pg::SqlError& e) {
    if (!pg::is_lock_not_available(e)) throw;
    throw Error(ErrorCode::conflict,
                fmt::format("table {} is in use by another session (its lock was not granted "
                            "within {} ms); run the statement again once it is free",
                            def.target_name(), pg::kShortLockTimeout.count()));
  }
  catalog::TransformDef probe = def;
  probe.target_schema = "pg_temp";
  auto adoption = bind::plan_adoption(conn, def, compile::compile_transform(probe).create);
  for (const auto& ddl : compile::adopt_target_sql(def, adoption.additions)) conn.exec(ddl);
  for (const auto& ddl : compile::compile_transform(def).side_create) conn.exec(ddl);
  def.adopted_columns = adoption.added_columns;
  return adoption.note;
}

std::string release_adopted_target(pg::Connection& conn, const catalog::TransformDef& def) {
  for (const auto& ddl : compile::release_adopted_sql(def)) conn.exec(ddl);
  return fmt::format(
      "table {} was adopted, so it stays with its last rows and is no longer "
      "maintained{}",
      def.target_name(),
      def.adopted_columns.empty() ? "" : "; Trellis's hidden columns were removed");
}

}  // namespace trellis::api
