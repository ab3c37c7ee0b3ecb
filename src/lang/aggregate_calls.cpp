// Aggregate call discovery; see aggregate_calls.hpp.
#include "lang/aggregate_calls.hpp"

#include <pg_query.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "lang/expression.hpp"
#include "lang/tokens.hpp"
#include "trellis/error.hpp"

namespace trellis::lang {
namespace {

using nlohmann::json;

constexpr std::string_view kWrapper = "SELECT ";

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool flag(const json& body, const char* name) {
  auto it = body.find(name);
  return it != body.end() && !it->is_null() && *it != false;
}

// Collects FuncCall nodes naming a built-in aggregate; does not descend into
// them (aggregates cannot nest).
void collect(const json& node, std::vector<AggregateCall>& out) {
  if (node.is_array()) {
    for (const json& item : node) collect(item, out);
    return;
  }
  if (!node.is_object()) return;
  auto call = node.find("FuncCall");
  if (call != node.end() && !call->contains("over")) {
    std::vector<std::string> names;
    for (const json& part : call->at("funcname"))
      names.push_back(lower(part.at("String").value("sval", "")));
    if (is_builtin_aggregate_name(names.back())) {
      AggregateCall c;
      c.name = names.back();
      c.builtin = names.size() == 1 || names.front() == "pg_catalog";
      c.star = flag(*call, "agg_star");
      c.plain = !flag(*call, "agg_distinct") && !flag(*call, "agg_filter") &&
                !flag(*call, "agg_order") && !flag(*call, "agg_within_group");
      c.args = call->contains("args") ? call->at("args").size() : 0;
      if (c.args == 1 && call->at("args")[0].contains("ColumnRef")) {
        const json& fields = call->at("args")[0].at("ColumnRef").at("fields");
        if (fields.back().contains("String"))
          c.arg_column = fields.back().at("String").value("sval", "");
        if (fields.size() == 2 && fields.front().contains("String"))
          c.arg_qualifier = fields.front().at("String").value("sval", "");
      }
      long location = call->value("location", -1L) - static_cast<long>(kWrapper.size());
      if (location < 0) throw Error(ErrorCode::internal, "aggregate call without a location");
      c.begin = static_cast<std::size_t>(location);
      out.push_back(std::move(c));
      return;
    }
  }
  for (const auto& [key, value] : node.items()) collect(value, out);
}

// Fills end and arg_sql: the call's first "(" after its name and the ")"
// that closes it.
void measure(const std::string& sql, const std::vector<Token>& tokens, AggregateCall& call) {
  auto it = std::find_if(tokens.begin(), tokens.end(),
                         [&](const Token& t) { return t.begin >= call.begin && t.text == "("; });
  if (it == tokens.end()) throw Error(ErrorCode::internal, "aggregate call without \"(\"");
  std::size_t open = it->end;
  int depth = 0;
  for (; it != tokens.end(); ++it) {
    if (it->kind != TokenKind::punct) continue;
    if (it->text == "(" || it->text == "[") ++depth;
    if (it->text == ")" || it->text == "]") --depth;
    if (depth == 0) break;
  }
  if (it == tokens.end()) throw Error(ErrorCode::internal, "aggregate call without \")\"");
  call.end = it->end;
  if (call.args == 1 && !call.star) call.arg_sql = sql.substr(open, it->begin - open);
}

}  // namespace

std::vector<AggregateCall> find_aggregate_calls(const std::string& expr_sql) {
  std::string wrapped = std::string(kWrapper) + expr_sql;
  PgQueryParseResult parsed = pg_query_parse(wrapped.c_str());
  json tree;
  bool ok = parsed.error == nullptr;
  if (ok) tree = json::parse(parsed.parse_tree);
  pg_query_free_parse_result(parsed);
  if (!ok) throw Error(ErrorCode::internal, "stored expression does not parse: " + expr_sql);
  std::vector<AggregateCall> calls;
  collect(tree, calls);
  std::vector<Token> tokens = tokenize(expr_sql);
  for (auto& c : calls) measure(expr_sql, tokens, c);
  std::sort(calls.begin(), calls.end(),
            [](const AggregateCall& a, const AggregateCall& b) { return a.begin < b.begin; });
  return calls;
}

}  // namespace trellis::lang
