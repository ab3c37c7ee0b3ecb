// Finds the aggregate calls inside a field's canonical SQL, with the byte
// range each occupies, so an invertible call (COUNT, SUM, AVG) can be
// maintained from running state on the target instead of being recomputed
// from the ledger. PostgreSQL's grammar finds the calls; its scanner finds
// where each call's parentheses close.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace trellis::lang {

struct AggregateCall {
  std::string name;           // lower case, unqualified
  bool builtin = true;        // unqualified or pg_catalog-qualified
  bool star = false;          // COUNT(*)
  bool plain = true;          // no DISTINCT, FILTER, ORDER BY or WITHIN GROUP
  std::size_t args = 0;       // number of arguments
  std::string arg_sql;        // the argument's SQL when there is exactly one
  std::string arg_column;     // that argument's column when it is a plain column reference
  std::string arg_qualifier;  // and the alias it is qualified with ("" when bare)
  std::size_t begin = 0;      // byte range of the whole call in the SQL text
  std::size_t end = 0;
};

// Aggregate calls (by built-in aggregate name) in `expr_sql`, a canonical
// expression as parse_expression() renders it, outermost first in text order.
std::vector<AggregateCall> find_aggregate_calls(const std::string& expr_sql);

}  // namespace trellis::lang
