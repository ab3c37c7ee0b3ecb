// Parses one transform expression with PostgreSQL's grammar (libpg_query):
// the text is wrapped as `SELECT <text>`, the result must be that one bare
// target, the tree must pass the allowlist, and the canonical SQL is the
// deparsed tree, verified to read back as the very same tree.
#include "lang/expression.hpp"

#include <pg_query.h>

#include <map>
#include <memory>
#include <string>

#include "lang/expression_check.hpp"
#include "lang/tokens.hpp"
#include "trellis/error.hpp"

namespace trellis::lang {
namespace {

using nlohmann::json;

constexpr std::string_view kWrapper = "SELECT ";

struct ParseResult {
  PgQueryParseResult raw;
  ~ParseResult() { pg_query_free_parse_result(raw); }
};

struct ProtobufResult {
  PgQueryProtobufParseResult raw;
  ~ProtobufResult() { pg_query_free_protobuf_parse_result(raw); }
};

struct DeparseResult {
  PgQueryDeparseResult raw;
  ~DeparseResult() { pg_query_free_deparse_result(raw); }
};

// Names the SELECT clause a SelectStmt key stands for, for messages.
std::string clause_name(const std::string& key) {
  static const std::map<std::string, std::string> kNames = {
      {"fromClause", "FROM"},     {"whereClause", "WHERE"},          {"groupClause", "GROUP BY"},
      {"havingClause", "HAVING"}, {"sortClause", "ORDER BY"},        {"limitCount", "LIMIT"},
      {"limitOffset", "OFFSET"},  {"distinctClause", "DISTINCT"},    {"intoClause", "INTO"},
      {"windowClause", "WINDOW"}, {"lockingClause", "FOR UPDATE"},   {"valuesLists", "VALUES"},
      {"withClause", "WITH"},     {"larg", "UNION/INTERSECT/EXCEPT"}};
  auto it = kNames.find(key);
  return it == kNames.end() ? key : it->second;
}

[[noreturn]] void not_single(const ExprSource& source, const std::string& detail) {
  fail_in_expression(source, source.begin, "expected a single scalar expression",
                     ", but " + detail);
}

// Parses `SELECT <text>` to JSON, mapping a syntax error back to the statement.
json parse_wrapped(const ExprSource& source, const std::string& wrapped) {
  ParseResult result{pg_query_parse(wrapped.c_str())};
  if (result.raw.error != nullptr) {
    std::size_t in_wrapped = char_pos_to_offset(wrapped, result.raw.error->cursorpos);
    long location = result.raw.error->cursorpos > 0 ? static_cast<long>(in_wrapped) : -1;
    fail_in_expression(source, statement_offset(source, location),
                       "invalid expression: " + std::string(result.raw.error->message));
  }
  try {
    return json::parse(result.raw.parse_tree);
  } catch (const json::exception&) {
    fail_in_expression(source, source.begin, "the expression is not valid UTF-8 text");
  }
}

void check_select_shape(const ExprSource& source, const json& select) {
  for (const auto& [key, value] : select.items()) {
    if (key == "targetList" || key == "limitOption") continue;
    if (key == "op" && value == "SETOP_NONE") continue;
    not_single(source, "the text contains " + clause_name(key));
  }
  if (!select.contains("targetList")) not_single(source, "the text is empty");
  if (select.at("targetList").size() != 1) not_single(source, "the text holds a list");
}

// Returns the ResTarget of the one expression, refusing every other shape
// (several statements, FROM/WHERE/... clauses, a list, an alias).
const json& single_target(const ExprSource& source, const json& tree) {
  const json& stmts = tree.at("stmts");
  if (stmts.size() != 1) not_single(source, "the text holds several statements");
  const json& stmt = stmts[0].at("stmt");
  if (!stmt.contains("SelectStmt")) not_single(source, "the text is not an expression");
  check_select_shape(source, stmt.at("SelectStmt"));
  const json& target = stmt.at("SelectStmt").at("targetList")[0].at("ResTarget");
  if (target.contains("name")) {
    not_single(source, "\"" + target.at("name").get<std::string>() +
                           "\" reads as an alias; put AS before a field's name");
  }
  return target;
}

// Drops everything that records where text was, leaving only meaning.
void strip_locations(json& node) {
  if (node.is_object()) {
    node.erase("location");
    node.erase("stmt_location");
    node.erase("stmt_len");
    for (auto& [key, value] : node.items()) strip_locations(value);
  } else if (node.is_array()) {
    for (json& item : node) strip_locations(item);
  }
}

std::string deparse(const ExprSource& source, const std::string& wrapped) {
  ProtobufResult parsed{pg_query_parse_protobuf(wrapped.c_str())};
  if (parsed.raw.error != nullptr) {
    fail_in_expression(source, source.begin, std::string(parsed.raw.error->message));
  }
  DeparseResult deparsed{pg_query_deparse_protobuf(parsed.raw.parse_tree)};
  if (deparsed.raw.error != nullptr) {
    fail_in_expression(source, source.begin, "PostgreSQL's deparser cannot render the expression",
                       ": " + std::string(deparsed.raw.error->message));
  }
  std::string sql = deparsed.raw.query;
  if (!sql.starts_with(kWrapper)) {
    throw Error(ErrorCode::internal, "unexpected deparser output \"" + sql + "\"");
  }
  return sql.substr(kWrapper.size());
}

// The deparser is known to drop needed parentheses in a few spots (e.g.
// `(a OR b) IS NULL`); refuse rather than store SQL that means something else.
void verify_round_trip(const ExprSource& source, json original, const std::string& sql) {
  std::string wrapped = std::string(kWrapper) + sql;
  ParseResult reparsed{pg_query_parse(wrapped.c_str())};
  bool same = reparsed.raw.error == nullptr;
  if (same) {
    json tree = json::parse(reparsed.raw.parse_tree);
    const json& stmts = tree.at("stmts");
    same = stmts.size() == 1 && stmts[0].at("stmt").contains("SelectStmt");
    if (same) {
      json target = stmts[0]["stmt"]["SelectStmt"]["targetList"][0]["ResTarget"]["val"];
      strip_locations(target);
      strip_locations(original);
      same = target == original;
    }
  }
  if (!same) {
    fail_in_expression(source, source.begin,
                       "PostgreSQL's deparser cannot reproduce the expression exactly",
                       " (it renders it as \"" + sql +
                           "\", which means something else); rewrite it in an equivalent form");
  }
}

}  // namespace

Expr parse_expression(std::string_view statement, std::size_t begin, std::size_t end) {
  ExprSource source{statement, begin, statement.substr(begin, end - begin)};
  if (source.text.find('\0') != std::string_view::npos) {
    fail_in_expression(source, begin, "unexpected NUL byte");
  }
  // Bounds what PostgreSQL's parser and its JSON writer recurse over.
  constexpr std::size_t kMaxExpressionBytes = 65536;
  if (source.text.size() > kMaxExpressionBytes) {
    fail_in_expression(source, begin,
                       "the expression is longer than " + std::to_string(kMaxExpressionBytes) +
                           " bytes; simplify it");
  }
  std::string wrapped = std::string(kWrapper) + std::string(source.text);
  json tree = parse_wrapped(source, wrapped);
  const json& value = single_target(source, tree).at("val");

  Expr expr;
  expr.text = std::string(source.text);
  expr.position = static_cast<int>(begin);
  check_expression_tree(source, value, expr);
  expr.is_column = value.contains("ColumnRef");
  expr.sql = deparse(source, wrapped);
  verify_round_trip(source, value, expr.sql);
  return expr;
}

}  // namespace trellis::lang
