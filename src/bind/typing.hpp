// Define-time typing (docs/architecture.md, data path step 1): each field and the WHERE predicate
// become a temporary probe view over the source inside a transaction that is always rolled back, so
// PostgreSQL itself resolves names and overloads, types the result and records the functions the
// expression calls; an index expression over a stand-in of the source checks immutability.
#pragma once

#include "catalog/definition.hpp"
#include "lang/statement.hpp"
#include "pg/connection.hpp"

namespace trellis::bind {

// Fills def.fields and def.where_sql from the statement, and for an
// aggregate the incremental plan. `def` carries the resolved source, alias
// and group. Throws trellis::Error(validation) naming the expression at
// fault.
void type_expressions(pg::Connection& conn, const lang::TransformStmt& stmt,
                      catalog::TransformDef& def);

}  // namespace trellis::bind
