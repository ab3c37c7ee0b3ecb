// The allowlist over PostgreSQL parse-tree nodes for transform expressions.
// Anything not known to be a plain scalar construct is refused, so a new or
// unexpected node kind can never slip into generated SQL unchecked.
#include "lang/expression_check.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include "lang/expression.hpp"
#include "lang/tokens.hpp"
#include "trellis/error.hpp"

namespace trellis::lang {
namespace {

using nlohmann::json;

// Node kinds that are scalar and need no check beyond walking their children.
const std::set<std::string, std::less<>> kPlainKinds = {
    "A_Const",      "BoolExpr",      "NullTest",     "BooleanTest", "CaseExpr",      "CaseWhen",
    "CoalesceExpr", "MinMaxExpr",    "TypeCast",     "A_ArrayExpr", "A_Indirection", "A_Indices",
    "RowExpr",      "CollateClause", "NamedArgExpr", "SortBy",      "String",        "Integer",
    "Float",        "Boolean",       "BitString",    "List"};

// Every A_Expr kind PostgreSQL 15 produces is a scalar operator form.
const std::set<std::string, std::less<>> kScalarAExprKinds = {
    "AEXPR_OP",           "AEXPR_OP_ANY",         "AEXPR_OP_ALL",  "AEXPR_DISTINCT",
    "AEXPR_NOT_DISTINCT", "AEXPR_NULLIF",         "AEXPR_IN",      "AEXPR_LIKE",
    "AEXPR_ILIKE",        "AEXPR_SIMILAR",        "AEXPR_BETWEEN", "AEXPR_NOT_BETWEEN",
    "AEXPR_BETWEEN_SYM",  "AEXPR_NOT_BETWEEN_SYM"};

// Built-in aggregates by name (regr_* is matched by prefix).
// clang-format off
const std::set<std::string, std::less<>> kAggregateNames = {
    "count", "sum", "avg", "min", "max", "bool_and", "bool_or", "every", "bit_and", "bit_or",
    "bit_xor", "string_agg", "array_agg", "json_agg", "jsonb_agg", "json_object_agg",
    "jsonb_object_agg", "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp",
    "corr", "covar_pop", "covar_samp", "xmlagg", "range_agg", "range_intersect_agg", "mode",
    "percentile_cont", "percentile_disc", "any_value"};
// clang-format on

bool is_wrapper(const json& value) {
  if (!value.is_object() || value.size() != 1) return false;
  const std::string& key = value.begin().key();
  return !key.empty() && std::isupper(static_cast<unsigned char>(key[0]));
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The identifier-like word written at `offset`, e.g. CURRENT_DATE, for messages.
std::string word_at(std::string_view text, std::size_t offset) {
  std::size_t end = offset;
  while (end < text.size() &&
         (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) {
    ++end;
  }
  return std::string(text.substr(offset, end - offset));
}

class Checker {
 public:
  Checker(const ExprSource& source, Expr& expr) : source_(source), expr_(expr) {}

  // Deeper trees are refused before anything recurses over them (this
  // walk, and the deparser after it, would exhaust the stack).
  static constexpr int kMaxDepth = 500;

  void visit(const json& node) {
    const std::string& kind = node.begin().key();
    const json& body = node.begin().value();
    if (++depth_ > kMaxDepth)
      fail_in_expression(source_, source_.begin,
                         "the expression is nested more than " + std::to_string(kMaxDepth) +
                             " levels deep; simplify it");
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{depth_};
    if (kind == "ColumnRef") return column_ref(body);
    if (kind == "FuncCall") {
      func_call(body);
    } else if (kind == "A_Expr") {
      a_expr(body);
    } else if (!kPlainKinds.contains(kind)) {
      refuse(kind, body);
    }
    walk_fields(body);
  }

 private:
  void walk_fields(const json& body) {
    for (const auto& [key, value] : body.items()) walk_value(value);
  }

  // Embedded structs (TypeName, Integer payloads, ...) are not wrapped in a
  // kind; walk through them so any node nested inside is still checked.
  void walk_value(const json& value) {
    if (value.is_array()) {
      for (const json& item : value) walk_value(item);
    } else if (is_wrapper(value)) {
      visit(value);
    } else if (value.is_object()) {
      walk_fields(value);
    }
  }

  [[noreturn]] void fail(const json& body, const std::string& problem,
                         const std::string& rest = "") {
    fail_in_expression(source_, statement_offset(source_, body.value("location", -1L)), problem,
                       rest);
  }

  void column_ref(const json& body) {
    const json& fields = body.at("fields");
    std::vector<std::string> parts;
    for (const json& field : fields) {
      if (field.contains("A_Star")) fail(body, "\"*\" is not allowed", "; name each column");
      parts.push_back(field.at("String").value("sval", ""));
    }
    if (parts.size() > 2) {
      fail(body, "column reference with " + std::to_string(parts.size()) + " parts",
           "; write column or table.column");
    }
    ColumnRef ref;
    if (parts.size() == 2) ref.qualifier = parts[0];
    ref.column = parts.back();
    ref.position = static_cast<int>(statement_offset(source_, body.value("location", -1L)));
    expr_.columns.push_back(std::move(ref));
  }

  void func_call(const json& body) {
    if (body.contains("over")) {
      fail(body, "window functions (OVER ...) are not allowed in a transform expression");
    }
    std::vector<std::string> names;
    for (const json& part : body.at("funcname")) {
      names.push_back(part.at("String").value("sval", ""));
    }
    std::string name = lower(names.back());
    bool builtin_schema = names.size() == 1 || lower(names.front()) == "pg_catalog";
    if (std::find(expr_.function_names.begin(), expr_.function_names.end(), name) ==
        expr_.function_names.end()) {
      expr_.function_names.push_back(name);
    }
    if ((builtin_schema && is_builtin_aggregate_name(name)) || has_aggregate_syntax(body)) {
      expr_.has_aggregate_call = true;
    }
  }

  static bool has_aggregate_syntax(const json& body) {
    static constexpr std::array<const char*, 5> kFlags = {"agg_star", "agg_distinct", "agg_order",
                                                          "agg_within_group", "agg_filter"};
    return std::any_of(kFlags.begin(), kFlags.end(), [&](const char* flag) {
      auto it = body.find(flag);
      return it != body.end() && !it->is_null() && *it != false;
    });
  }

  void a_expr(const json& body) {
    std::string kind = body.value("kind", "");
    if (!kScalarAExprKinds.contains(kind)) {
      fail(body, "operator form " + kind + " is not supported");
    }
  }

  [[noreturn]] void refuse(const std::string& kind, const json& body) {
    if (kind == "SubLink") fail(body, "subqueries are not allowed in a transform expression");
    if (kind == "ParamRef") {
      fail(body, "query parameters ($1, ...) are not allowed in a transform expression");
    }
    if (kind == "A_Star") fail(body, "\"*\" is not allowed", "; name each column");
    if (kind == "GroupingFunc") fail(body, "GROUPING() is not allowed in a transform expression");
    if (kind == "SQLValueFunction") {
      std::size_t at = statement_offset(source_, body.value("location", -1L));
      fail(body, word_at(source_.statement, at) + " is not allowed",
           ": its value depends on the time or the session, so a derived table could never "
           "be kept equal to it");
    }
    fail(body, "this construct (" + kind + ") is not supported in a transform expression");
  }

  const ExprSource& source_;
  Expr& expr_;
  int depth_ = 0;
};

}  // namespace

bool is_builtin_aggregate_name(std::string_view name) {
  return kAggregateNames.contains(name) || name.starts_with("regr_");
}

void fail_in_expression(const ExprSource& source, std::size_t offset, const std::string& problem,
                        const std::string& rest) {
  throw Error(ErrorCode::parse, problem + " at " + line_col(source.statement, offset) +
                                    " in expression \"" + std::string(source.text) + "\"" + rest);
}

std::size_t statement_offset(const ExprSource& source, long location) {
  long inner = location - ExprSource::wrapper_length;
  if (location < 0 || inner < 0 || static_cast<std::size_t>(inner) > source.text.size()) {
    return source.begin;
  }
  return source.begin + static_cast<std::size_t>(inner);
}

void check_expression_tree(const ExprSource& source, const json& value, Expr& expr) {
  if (!is_wrapper(value)) {
    throw Error(ErrorCode::internal,
                "unexpected parse tree shape for \"" + std::string(source.text) + "\"");
  }
  Checker(source, expr).visit(value);
}

}  // namespace trellis::lang
