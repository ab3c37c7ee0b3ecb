// Tests for single-expression parsing: the wrapper checks that stop
// injection, the node allowlist, what gets recorded, and the canonical SQL
// taken from PostgreSQL's deparser (verified to read back identically).
#include <gtest/gtest.h>

#include <string>

#include "lang/expression.hpp"
#include "trellis/error.hpp"

namespace trellis::lang {
namespace {

Expr parse(const std::string& text) {
  return parse_expression(text, 0, text.size());
}

// The message of the error parse_expression throws for `text`.
std::string refusal(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::parse) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "no error for: " << text;
  return "";
}

void expect_refused(const std::string& text, const std::string& fragment) {
  std::string message = refusal(text);
  EXPECT_NE(message.find(fragment), std::string::npos)
      << "message: " << message << "\nexpected to contain: " << fragment;
  EXPECT_NE(message.find("\"" + text + "\""), std::string::npos)
      << "message should quote the expression: " << message;
}

TEST(LangExpression, CanonicalSqlComesFromTheParseTree) {
  EXPECT_EQ(parse("a+b*c").sql, "a + (b * c)");
  EXPECT_EQ(parse("CAST(a + b AS int)").sql, "CAST(a + b AS int)");
  EXPECT_EQ(parse("(a+b)::int").sql, "CAST(a + b AS int)");
  EXPECT_EQ(parse("date '2024-01-01'").sql, "'2024-01-01'::date");
  EXPECT_EQ(parse("$$x'y$$").sql, "'x''y'");
  EXPECT_EQ(parse("'a\\b'").sql, "E'a\\\\b'");
  EXPECT_EQ(parse("\"Weird \"\"Col\"").sql, "\"Weird \"\"Col\"");
  EXPECT_EQ(parse("CASE WHEN a IS NULL THEN 0 ELSE a END").sql,
            "CASE WHEN a IS NULL THEN 0 ELSE a END");
  EXPECT_EQ(parse("nullif(a, b)").sql, "NULLIF(a, b)");
  EXPECT_EQ(parse("greatest(a, 1)").sql, "GREATEST(a, 1)");
  EXPECT_EQ(parse("x::numeric(10,2)").sql, "x::numeric(10, 2)");
  EXPECT_EQ(parse("arr[1:2]").sql, "arr[1:2]");
  EXPECT_EQ(parse("ARRAY[1, 2]").sql, "ARRAY[1, 2]");
  EXPECT_EQ(parse("name COLLATE \"C\"").sql, "name COLLATE \"C\"");
  EXPECT_EQ(parse("j->'a'->>'b'").sql, "(j -> 'a') ->> 'b'");
}

TEST(LangExpression, KeepsTextAndPositionOfTheUsersSpelling) {
  const std::string statement = "xx  lower( Name )  yy";
  Expr expr = parse_expression(statement, 4, 17);
  EXPECT_EQ(expr.text, "lower( Name )");
  EXPECT_EQ(expr.position, 4);
  EXPECT_EQ(expr.sql, "lower(name)");
  ASSERT_EQ(expr.columns.size(), 1u);
  EXPECT_EQ(expr.columns[0].position, 11);
}

TEST(LangExpression, ColumnPositionsCountBytesPastMultibyteText) {
  Expr expr = parse("'é' || ü.x");
  ASSERT_EQ(expr.columns.size(), 1u);
  EXPECT_EQ(expr.columns[0].qualifier, "ü");
  EXPECT_EQ(expr.columns[0].position, 8);  // 'é' is 4 bytes, then " || "
}

TEST(LangExpression, RecordsFunctionNamesOnceInLowerCase) {
  Expr expr = parse("Lower(a) || pg_catalog.UPPER(b) || lower(c)");
  EXPECT_EQ(expr.function_names, (std::vector<std::string>{"lower", "upper"}));
  EXPECT_FALSE(expr.has_aggregate_call);
}

TEST(LangExpression, DetectsAggregateCalls) {
  EXPECT_TRUE(parse("count(*)").has_aggregate_call);
  EXPECT_TRUE(parse("1 + SUM(x)").has_aggregate_call);
  EXPECT_TRUE(parse("pg_catalog.avg(x)").has_aggregate_call);
  EXPECT_TRUE(parse("regr_slope(y, x)").has_aggregate_call);
  EXPECT_TRUE(parse("string_agg(x, ',' ORDER BY y DESC)").has_aggregate_call);
  EXPECT_TRUE(parse("my_agg(DISTINCT x)").has_aggregate_call);
  EXPECT_TRUE(parse("percentile_cont(0.5) WITHIN GROUP (ORDER BY x)").has_aggregate_call);
  EXPECT_FALSE(parse("myschema.sum(x)").has_aggregate_call);
  EXPECT_FALSE(parse("coalesce(a, 0)").has_aggregate_call);
}

TEST(LangExpression, AggregateSyntaxSurvivesCanonicalisation) {
  EXPECT_EQ(parse("count(distinct x order by x) filter (where y > 1)").sql,
            "count(DISTINCT x ORDER BY x) FILTER (WHERE y > 1)");
}

TEST(LangExpression, RefusesInjectedStatements) {
  expect_refused("1; DROP TABLE x", "several statements");
  expect_refused("x FROM y", "the text contains FROM");
  expect_refused("x WHERE true", "the text contains WHERE");
  expect_refused("x ORDER BY 1", "the text contains ORDER BY");
  expect_refused("1 UNION SELECT 2", "UNION");
  expect_refused("a, b", "list");
  expect_refused("a b", "\"b\" reads as an alias");
}

TEST(LangExpression, RefusesDisallowedNodes) {
  expect_refused("a IN (SELECT b FROM c)", "subqueries are not allowed");
  expect_refused("EXISTS (SELECT 1)", "subqueries are not allowed");
  expect_refused("rank() OVER (ORDER BY a)", "window functions");
  expect_refused("$1 + 1", "query parameters");
  expect_refused("CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP is not allowed");
  expect_refused("current_user", "current_user is not allowed");
  expect_refused("s.*", "\"*\" is not allowed");
  expect_refused("(f(x)).*", "\"*\" is not allowed");
  expect_refused("GROUPING(a)", "GROUPING()");
  expect_refused("xmlelement(name a)", "not supported");
  expect_refused("a.b.c", "3 parts");
}

TEST(LangExpression, ReportsSyntaxErrorsWithPosition) {
  std::string message = refusal("a + )");
  EXPECT_NE(message.find("syntax error"), std::string::npos) << message;
  EXPECT_NE(message.find("at 1:5"), std::string::npos) << message;
}

TEST(LangExpression, RefusesEmptyText) {
  expect_refused("", "empty");
}

TEST(LangExpression, RefusesWhatTheDeparserCannotReproduce) {
  // libpg_query 15 renders this as "a OR b IS NULL", which means something else.
  expect_refused("(a OR b) IS NULL", "deparser");
}

TEST(LangExpression, RecognisesBuiltinAggregateNames) {
  EXPECT_TRUE(is_builtin_aggregate_name("jsonb_object_agg"));
  EXPECT_TRUE(is_builtin_aggregate_name("regr_r2"));
  EXPECT_FALSE(is_builtin_aggregate_name("lower"));
}

}  // namespace
}  // namespace trellis::lang
