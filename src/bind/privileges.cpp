// The privilege checks of a definition; see privileges.hpp. One round trip
// reads, for every table, whether the current role may use its schema,
// select from it and act as its owner, and whether it may create in the
// target's schema.
#include "bind/privileges.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "bind/refusal.hpp"

namespace trellis::bind {

using base::ident;
using base::qualified;

void check_privileges(pg::Connection& conn, const std::vector<const TableDescription*>& tables,
                      const std::string& target_schema, const std::string& target) {
  std::string oids;
  for (const auto* t : tables) oids += (oids.empty() ? "" : ",") + std::to_string(t->oid);
  // The target schema's row has no table (oid NULL) and comes last; a schema
  // that does not exist is refused elsewhere, so it passes here.
  auto r = conn.exec(
      "WITH ts AS (SELECT coalesce(has_schema_privilege(n.oid, 'USAGE'), true) AS usage, "
      "coalesce(has_schema_privilege(n.oid, 'CREATE'), true) AS create FROM (SELECT (SELECT oid "
      "FROM pg_namespace WHERE nspname = $2::text AND $2::text <> '') AS oid) n) "
      "SELECT c.oid::bigint, has_schema_privilege(c.relnamespace, 'USAGE'), "
      "has_table_privilege(c.oid, 'SELECT'), pg_has_role(current_user, c.relowner, 'USAGE'), "
      "pg_get_userbyid(c.relowner), current_user, true, true FROM pg_class c WHERE c.oid = "
      "ANY($1::oid[]) UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, current_user, ts.usage, "
      "ts.create FROM ts ORDER BY 1 NULLS LAST",
      {"{" + oids + "}", target_schema});
  for (int i = 0; i < r.rows(); ++i) {
    std::string role = ident(r.get(i, 5));
    if (r.is_null(i, 0)) {
      if (!r.get_bool(i, 6) || !r.get_bool(i, 7))
        refuse(
            ErrorCode::validation,
            fmt::format("role {0} lacks {1} on schema {2}, where the target of transform {3} "
                        "is created; run: GRANT USAGE, CREATE ON SCHEMA {2} TO {0}",
                        role, r.get_bool(i, 6) ? "CREATE" : "USAGE", ident(target_schema), target));
      continue;
    }
    const TableDescription* t = nullptr;
    for (const auto* candidate : tables)
      if (std::to_string(candidate->oid) == r.get(i, 0)) t = candidate;
    if (!t) continue;
    std::string table = qualified(t->schema, t->name);
    if (!r.get_bool(i, 1))
      refuse(ErrorCode::validation,
             fmt::format("role {0} lacks USAGE on schema {1}, which holds table {2} that transform "
                         "{3} reads; run: GRANT USAGE ON SCHEMA {1} TO {0}",
                         role, ident(t->schema), table, target));
    if (!r.get_bool(i, 2))
      refuse(ErrorCode::validation,
             fmt::format("role {0} lacks SELECT on table {1}, which transform {2} reads; run: "
                         "GRANT SELECT ON {1} TO {0}",
                         role, table, target));
    if (!r.get_bool(i, 3))
      refuse(ErrorCode::validation,
             fmt::format("role {0} cannot install capture on table {1}, which transform {2} "
                         "reads: capture triggers are enabled ALWAYS, which only the table's owner "
                         "({3}) may do; run: GRANT {3} TO {0} (or ALTER TABLE {1} OWNER TO {0})",
                         role, table, target, ident(r.get(i, 4))));
  }
}

}  // namespace trellis::bind
