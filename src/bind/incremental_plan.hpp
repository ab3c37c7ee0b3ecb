// Decides, at define time, which fields of a GROUP BY transform are kept up
// to date without a scan of the group's ledger rows and which are
// recomputed over them. A field is incremental when each of its aggregate
// calls is invertible — COUNT(*), COUNT(x), and SUM/AVG over smallint,
// integer, bigint or numeric with a declared scale (whose sums are exact and
// whose display scale is fixed) — or is MIN/MAX of a plain column with a
// btree order, which an index on the ledger answers. Float sums depend on
// row order and unconstrained numerics on the largest scale present, so
// those, and every other aggregate (DISTINCT, FILTER, ORDER BY, STRING_AGG,
// MIN/MAX of an expression, ...), are recomputed.
#pragma once

#include "catalog/definition.hpp"
#include "pg/connection.hpp"

namespace trellis::bind {

// Fills def.accumulators and each field's `incremental` and `calls`. Runs
// inside define's validation transaction: argument types are read from
// temporary probe views over the source.
void plan_incremental(pg::Connection& conn, catalog::TransformDef& def);

}  // namespace trellis::bind
