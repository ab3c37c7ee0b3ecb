// Parsing of one scalar expression of a statement (a field, a GROUP BY item,
// the WHERE predicate). PostgreSQL's grammar does the parsing; the result is
// checked against an allowlist and re-rendered from the parse tree, so no
// user text reaches generated SQL verbatim.
#pragma once

#include <cstddef>
#include <string_view>

#include "lang/statement.hpp"

namespace trellis::lang {

// Parses statement[begin, end) as exactly one scalar expression. Throws
// trellis::Error(parse) naming the expression text and its line:column in
// `statement` when the text is not a single allowed expression.
Expr parse_expression(std::string_view statement, std::size_t begin, std::size_t end);

// True for the name of a built-in PostgreSQL aggregate (lower case,
// unqualified), e.g. "count", "string_agg", "regr_slope".
bool is_builtin_aggregate_name(std::string_view name);

}  // namespace trellis::lang
