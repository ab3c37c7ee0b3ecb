// Catalog-only widenings (docs/architecture.md, module map: capture/): when a column a
// transform reads is widened in a way PostgreSQL applies without rewriting
// the table (varchar(n) to a longer varchar, varchar or text; numeric(p,s)
// to a larger precision at the same scale, or to unconstrained numeric),
// Trellis's copies of it (target field columns and ledger columns of the
// same type) are widened the same way and the definition re-validated in
// place: no pause, no rebuild. Anything else that changed stays a retype
// and pauses the reader (capture/drift).
#pragma once

#include <optional>
#include <string>

#include "catalog/store.hpp"
#include "pg/connection.hpp"

namespace trellis::capture {

// True when a column of type `from` retyped to `to` keeps every stored value
// and its text as it was, and PostgreSQL does it without a rewrite.
bool is_catalog_only_widening(const std::string& from, const std::string& to);

enum class Widened { done, retry_later, not_widening };

// Re-validates `def` against the live schema and, when every difference in
// what Trellis stores is a catalog-only widening of a non-key column,
// applies them (ALTER ... TYPE on the target and ledger, the new definition
// and version) in one transaction. `retry_later` when a lock was not had
// within 50 ms; `not_widening` when the change needs a pause instead
// (`why` says what).
Widened widen_in_place(pg::Connection& conn, catalog::Store& store,
                       const catalog::TransformDef& def, std::string& why);

}  // namespace trellis::capture
