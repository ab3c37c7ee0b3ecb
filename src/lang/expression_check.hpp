// Internal to lang/: the allowlist walk over libpg_query's JSON parse tree of
// one expression. It refuses every node kind a transform may not contain and
// records the column references and function calls it meets.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "lang/statement.hpp"

namespace trellis::lang {

// Where an expression sits, so messages and positions refer to the statement.
struct ExprSource {
  std::string_view statement;
  std::size_t begin = 0;                    // byte offset of the expression text in `statement`
  std::string_view text;                    // the expression text itself
  static constexpr int wrapper_length = 7;  // length of "SELECT " put before `text`
};

// Throws trellis::Error(parse): `<problem> at L:C in expression "<text>"<rest>`.
// `offset` is a byte offset into the statement.
[[noreturn]] void fail_in_expression(const ExprSource& source, std::size_t offset,
                                     const std::string& problem, const std::string& rest = "");

// Maps a parse-tree location (relative to "SELECT <text>") to a statement
// offset; unknown locations map to the start of the expression.
std::size_t statement_offset(const ExprSource& source, long location);

// Walks the expression node `value` (a {"Kind": {...}} object), refusing
// disallowed nodes and filling expr.columns, function_names and
// has_aggregate_call.
void check_expression_tree(const ExprSource& source, const nlohmann::json& value, Expr& expr);

}  // namespace trellis::lang
