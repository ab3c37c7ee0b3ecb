// The running state an aggregate target keeps for its incremental fields
// (docs/architecture.md, data path step 8): hidden columns "__n" (the group's member count) and,
// per accumulator i, "__c<i>" (non-null count), "__s<i>" (sum of the non-NaN values) and, for
// numeric arguments, "__nan<i>". A page folds each group's delta (new contributions minus old) into
// them; a build's groups phase sets them from the ledger. Incremental fields are the user's
// expression with each invertible call replaced by the value PostgreSQL's own aggregate would give
// from that state.
#pragma once

#include <string>
#include <vector>

#include "catalog/definition.hpp"

namespace trellis::compile {

// Names of the state columns, in a fixed order ("__n" first); empty when no
// field is incremental.
std::vector<std::string> state_columns(const catalog::TransformDef& d);

// A state column's type: numeric for sums, bigint for counts.
std::string state_column_type(const std::string& name);

// `"__n" bigint NOT NULL DEFAULT 0, ...` for CREATE TABLE (with a trailing
// ", " when not empty).
std::string state_columns_ddl(const catalog::TransformDef& d);

// One numeric contribution per state column for a row in scope under the
// source's alias (a ledger row, or a source row with the ledger's column
// names), in state order.
std::vector<std::string> contributions(const catalog::TransformDef& d);

// The state of the grouped ledger rows in scope under the source's alias:
// `, count(*) AS "__n", ...` ("" when no field is incremental).
std::string absolute_state(const catalog::TransformDef& d);

// CREATE INDEX statements for the ledger: (group, column) WHERE present,
// for each column an incremental MIN/MAX reads.
std::vector<std::string> extreme_indexes(const catalog::TransformDef& d);

// An incremental field's value from the state columns of `alias` (which
// also has the group's "__group") and, for MIN/MAX, the ledger's index.
std::string field_from_state(const catalog::TransformDef& d, const catalog::Field& f,
                             const std::string& alias);

}  // namespace trellis::compile
