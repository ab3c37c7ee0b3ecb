// What Trellis's role must hold for a definition, checked at define (and at
// RESUME) so a missing privilege is refused at the call, naming the object,
// the privilege and the GRANT that gives it, instead of failing later inside
// a probe, a build or the capture install with PostgreSQL's bare
// "permission denied". README.md ("Privileges") lists the same rules.
//
// * every table the definition reads (source, joined tables, relationship
//   ends): USAGE on its schema and SELECT on it, which builds and drains
//   need;
// * the same tables: ownership (membership in the owner's role), because
//   capture installs triggers and enables them ALWAYS, which only the owner
//   may do;
// * at define, the target's schema: USAGE and CREATE, to create the target
//   (and its ledger or rejected-matches table).
#pragma once

#include <string>
#include <vector>

#include "bind/table_description.hpp"
#include "pg/connection.hpp"

namespace trellis::bind {

// Throws trellis::Error(validation) for the first privilege the current role
// lacks: over `tables` (read and captured), and over `target_schema` unless
// it is empty. `target` names the transform in the message.
void check_privileges(pg::Connection& conn, const std::vector<const TableDescription*>& tables,
                      const std::string& target_schema, const std::string& target);

}  // namespace trellis::bind
