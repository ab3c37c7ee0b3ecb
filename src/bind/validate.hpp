// Define-time validation (README, "The statement language"): resolves every name against the live
// database, checks the source's key and the field rules, and lets PostgreSQL
// type each expression and report the functions it calls. The result is the
// resolved definition the catalog stores and the compiler renders.
#pragma once

#include <string>
#include <vector>

#include "bind/table_description.hpp"
#include "catalog/definition.hpp"
#include "catalog/store.hpp"
#include "lang/statement.hpp"
#include "pg/connection.hpp"

namespace trellis::bind {

struct ValidateContext {
  std::string target_schema;  // default schema for unqualified names
  bool resuming = false;      // the target already exists (RESUME re-validates)
  // What a re-validation (RESUME, ALTER) re-validates: what its target was
  // built as carries over (TransformDef::identity).
  const catalog::TransformDef* built = nullptr;
};

// Throws trellis::Error(validation | conflict | not_found) naming the table,
// column or field at fault and the fix.
catalog::TransformDef validate_transform(pg::Connection& conn, catalog::Store& store,
                                         const lang::TransformStmt& stmt,
                                         const ValidateContext& ctx);

// The source index a GROUP BY needs (define refuses without it unless WITHOUT SOURCE INDEX;
// status reports it missing): whether `src` has one leading with the group's items (a column
// by name, an expression by its index key), and the CREATE INDEX that makes one. A one-row
// aggregate (no GROUP BY) needs none.
bool has_group_index(const TableDescription& src, const catalog::TransformDef& def);
// The keys that index must lead with: a plain group column's name, an expression's index key.
std::vector<std::string> group_index_keys(const catalog::TransformDef& def);
std::string group_index_suggestion(const catalog::TransformDef& def);

// The statement as stored and dumped: names qualified, expressions canonical.
std::string normalized_statement(const catalog::TransformDef& def);

}  // namespace trellis::bind
