// Tests for the statement parser (README, "The statement language"): every statement form, name
// folding, clause splitting, and the refusals with their positions.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "lang/statement.hpp"
#include "trellis/error.hpp"

namespace trellis::lang {
namespace {

TransformStmt transform(const std::string& text) {
  return std::get<TransformStmt>(parse_statement(text));
}

// The error parse_statement throws for `text` (a failure when none is thrown).
Error parse_error(const std::string& text) {
  try {
    parse_statement(text);
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "no error for: " << text;
  return Error(ErrorCode::internal, "");
}

void expect_message(const Error& error, const std::string& fragment) {
  EXPECT_EQ(error.code(), ErrorCode::parse);
  EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos)
      << "message: " << error.what() << "\nexpected to contain: " << fragment;
}

TEST(LangParser, ParsesMinimalTransform) {
  TransformStmt stmt = transform("TRANSFORM totals FROM orders SELECT amount AS amount");
  EXPECT_FALSE(stmt.target.schema.has_value());
  EXPECT_EQ(stmt.target.name, "totals");
  EXPECT_EQ(stmt.source.name, "orders");
  EXPECT_FALSE(stmt.alias.has_value());
  EXPECT_FALSE(stmt.adopt_existing);
  EXPECT_FALSE(stmt.without_source_index);
  EXPECT_TRUE(stmt.key_columns.empty());
  EXPECT_TRUE(stmt.group_by.empty());
  EXPECT_FALSE(stmt.where.has_value());
  ASSERT_EQ(stmt.fields.size(), 1u);
  EXPECT_EQ(stmt.fields[0].name, "amount");
  EXPECT_EQ(stmt.fields[0].expr.sql, "amount");
  EXPECT_EQ(stmt.fields[0].expr.text, "amount");
  EXPECT_EQ(stmt.text, "TRANSFORM totals FROM orders SELECT amount AS amount");
}

TEST(LangParser, KeywordsAreCaseInsensitive) {
  TransformStmt stmt = transform("tRaNsFoRm t from s Select a + 1 aS b wHeRe a > 1");
  EXPECT_EQ(stmt.target.name, "t");
  ASSERT_EQ(stmt.fields.size(), 1u);
  EXPECT_EQ(stmt.fields[0].name, "b");
  EXPECT_EQ(stmt.fields[0].expr.sql, "a + 1");
  ASSERT_TRUE(stmt.where.has_value());
  EXPECT_EQ(stmt.where->sql, "a > 1");
}

TEST(LangParser, UnquotedNamesFoldAndQuotedNamesKeepCase) {
  TransformStmt stmt = transform(
      "TRANSFORM Analytics.MyTarget FROM \"Src Schema\".\"Odd\"\"Name\" AS \"O\" "
      "SELECT \"O\".\"Amount\" AS \"Total Amount\", Price AS PriceOut");
  EXPECT_EQ(stmt.target.schema, "analytics");
  EXPECT_EQ(stmt.target.name, "mytarget");
  EXPECT_EQ(stmt.source.schema, "Src Schema");
  EXPECT_EQ(stmt.source.name, "Odd\"Name");
  EXPECT_EQ(stmt.alias, "O");
  ASSERT_EQ(stmt.fields.size(), 2u);
  EXPECT_EQ(stmt.fields[0].name, "Total Amount");
  EXPECT_EQ(stmt.fields[0].expr.sql, "\"O\".\"Amount\"");
  ASSERT_EQ(stmt.fields[0].expr.columns.size(), 1u);
  EXPECT_EQ(stmt.fields[0].expr.columns[0].qualifier, "O");
  EXPECT_EQ(stmt.fields[0].expr.columns[0].column, "Amount");
  EXPECT_EQ(stmt.fields[1].name, "priceout");
  EXPECT_EQ(stmt.fields[1].expr.sql, "price");
}

TEST(LangParser, AliasWithoutAsAndKeyColumns) {
  TransformStmt stmt = transform(
      "TRANSFORM t FROM public.s src KEY (tenant_id, \"EventId\") "
      "SELECT src.kind AS kind");
  EXPECT_EQ(stmt.source.schema, "public");
  EXPECT_EQ(stmt.source.name, "s");
  EXPECT_EQ(stmt.alias, "src");
  ASSERT_EQ(stmt.key_columns.size(), 2u);
  EXPECT_EQ(stmt.key_columns[0], "tenant_id");
  EXPECT_EQ(stmt.key_columns[1], "EventId");
}

TEST(LangParser, KeyWithoutAliasIsNotTakenAsAlias) {
  TransformStmt stmt = transform("TRANSFORM t FROM s KEY (id) SELECT a AS a");
  EXPECT_FALSE(stmt.alias.has_value());
  ASSERT_EQ(stmt.key_columns.size(), 1u);
  EXPECT_EQ(stmt.key_columns[0], "id");
}

TEST(LangParser, AdoptExistingTable) {
  TransformStmt stmt =
      transform("TRANSFORM events_by_user ADOPT EXISTING TABLE FROM events SELECT kind AS kind");
  EXPECT_TRUE(stmt.adopt_existing);
  EXPECT_EQ(stmt.source.name, "events");
}

TEST(LangParser, GroupByWithoutSourceIndex) {
  TransformStmt stmt = transform(
      "TRANSFORM last_seen FROM logins GROUP BY user_id, lower(region) WITHOUT SOURCE INDEX "
      "SELECT user_id AS user_id, max(at) AS last_login, count(*) AS n");
  ASSERT_EQ(stmt.group_by.size(), 2u);
  EXPECT_EQ(stmt.group_by[0].expr.sql, "user_id");
  EXPECT_EQ(stmt.group_by[1].expr.sql, "lower(region)");
  EXPECT_FALSE(stmt.group_by[1].expr.has_aggregate_call);
  EXPECT_TRUE(stmt.without_source_index);
  ASSERT_EQ(stmt.fields.size(), 3u);
  EXPECT_FALSE(stmt.fields[0].expr.has_aggregate_call);
  EXPECT_TRUE(stmt.fields[1].expr.has_aggregate_call);
  EXPECT_TRUE(stmt.fields[2].expr.has_aggregate_call);
  EXPECT_EQ(stmt.fields[2].expr.sql, "count(*)");
}

TEST(LangParser, GroupByItemsMayBeNamed) {
  TransformStmt stmt = transform(
      "TRANSFORM t FROM s GROUP BY lower(email) AS Who, CAST(at AS date) AS day, grp "
      "SELECT count(*) AS n");
  ASSERT_EQ(stmt.group_by.size(), 3u);
  EXPECT_EQ(stmt.group_by[0].expr.sql, "lower(email)");
  EXPECT_EQ(stmt.group_by[0].name, std::optional<std::string>("who"));
  EXPECT_EQ(stmt.group_by[1].expr.sql, "at::date");  // the AS inside CAST is not the name
  EXPECT_EQ(stmt.group_by[1].name, std::optional<std::string>("day"));
  EXPECT_EQ(stmt.group_by[2].expr.sql, "grp");
  EXPECT_FALSE(stmt.group_by[2].name);
}

TEST(LangParser, GroupByNameMustBeOneName) {
  EXPECT_THROW(transform("TRANSFORM t FROM s GROUP BY lower(e) AS SELECT count(*) AS n"),
               trellis::Error);
  EXPECT_THROW(transform("TRANSFORM t FROM s GROUP BY lower(e) AS a b SELECT count(*) AS n"),
               trellis::Error);
  EXPECT_THROW(transform("TRANSFORM t FROM s GROUP BY AS a SELECT count(*) AS n"), trellis::Error);
}

TEST(LangParser, AggregatesWithoutGroupByParse) {
  TransformStmt stmt = transform("TRANSFORM t FROM s SELECT sum(amount) AS total");
  EXPECT_TRUE(stmt.group_by.empty());
  EXPECT_TRUE(stmt.fields[0].expr.has_aggregate_call);
}

TEST(LangParser, GroupByWithoutSelectIsADistinct) {
  TransformStmt stmt = transform("TRANSFORM t FROM s GROUP BY a, lower(b) AS lb WHERE c > 0");
  ASSERT_EQ(stmt.group_by.size(), 2u);
  EXPECT_TRUE(stmt.fields.empty());
  ASSERT_TRUE(stmt.where);
  EXPECT_EQ(stmt.where->sql, "c > 0");
  stmt = transform("TRANSFORM t FROM s GROUP BY a WITHOUT SOURCE INDEX");
  EXPECT_TRUE(stmt.fields.empty());
  EXPECT_TRUE(stmt.without_source_index);
  // Without GROUP BY a SELECT list is still needed.
  EXPECT_NE(std::string(parse_error("TRANSFORM t FROM s WHERE c > 0").what()).find("SELECT"),
            std::string::npos);
  EXPECT_NE(std::string(parse_error("TRANSFORM t FROM s GROUP BY a junk").what()).find("junk"),
            std::string::npos);
}

TEST(LangParser, AColumnIsKnownByItsParseTree) {
  TransformStmt stmt = transform(
      "TRANSFORM t FROM s GROUP BY s.a, (b), CASE WHEN c IS NULL THEN 0 ELSE 1 END AS k SELECT "
      "count(*) AS n");
  ASSERT_EQ(stmt.group_by.size(), 3u);
  EXPECT_TRUE(stmt.group_by[0].expr.is_column);
  EXPECT_TRUE(stmt.group_by[1].expr.is_column);
  EXPECT_FALSE(stmt.group_by[2].expr.is_column);  // reads one column, is none
  EXPECT_EQ(stmt.group_by[2].expr.columns.size(), 1u);
}

TEST(LangParser, GroupByMayHoldCastWithoutTimeZone) {
  TransformStmt stmt =
      transform("TRANSFORM t FROM s GROUP BY ts::timestamp without time zone SELECT count(*) AS n");
  ASSERT_EQ(stmt.group_by.size(), 1u);
  EXPECT_EQ(stmt.group_by[0].expr.sql, "ts::timestamp");
  EXPECT_FALSE(stmt.without_source_index);
}

TEST(LangParser, WithoutSourceIndexAlsoAllowedWithoutGroupBy) {
  TransformStmt stmt = transform("TRANSFORM t FROM s WITHOUT SOURCE INDEX SELECT a AS a");
  EXPECT_TRUE(stmt.without_source_index);
  EXPECT_TRUE(stmt.group_by.empty());
}

TEST(LangParser, WherePredicateIsCanonicalised) {
  TransformStmt stmt =
      transform("TRANSFORM t FROM s SELECT a AS a WHERE (a>1) and B is not null OR c IN (1,2)");
  ASSERT_TRUE(stmt.where.has_value());
  EXPECT_EQ(stmt.where->sql, "(a > 1 AND b IS NOT NULL) OR c IN (1, 2)");
  ASSERT_EQ(stmt.where->columns.size(), 3u);
  EXPECT_EQ(stmt.where->columns[1].column, "b");
}

TEST(LangParser, AwkwardStringLiteralsDoNotSplitClauses) {
  TransformStmt stmt = transform(
      "TRANSFORM t FROM s SELECT 'it''s' AS a, E'x\\ny' AS b, $$p, q AS r WHERE$$ AS c, "
      "$tag$ $$ ; $tag$ AS d");
  ASSERT_EQ(stmt.fields.size(), 4u);
  EXPECT_EQ(stmt.fields[0].expr.sql, "'it''s'");
  EXPECT_EQ(stmt.fields[1].expr.sql, "'x\ny'");
  EXPECT_EQ(stmt.fields[2].name, "c");
  EXPECT_EQ(stmt.fields[2].expr.sql, "'p, q AS r WHERE'");
  EXPECT_EQ(stmt.fields[3].expr.sql, "' $$ ; '");
  EXPECT_FALSE(stmt.where.has_value());
}

TEST(LangParser, NestedParensAndCommasStayInOneField) {
  TransformStmt stmt = transform(
      "TRANSFORM t FROM s SELECT coalesce(a, (b + c) * 2, f(d, e)) AS x, "
      "CAST(g AS text) AS y, substring(h FROM 2 FOR 3) AS z");
  ASSERT_EQ(stmt.fields.size(), 3u);
  EXPECT_EQ(stmt.fields[0].expr.sql, "COALESCE(a, (b + c) * 2, f(d, e))");
  EXPECT_EQ(stmt.fields[0].expr.function_names, std::vector<std::string>{"f"});
  EXPECT_EQ(stmt.fields[0].expr.columns.size(), 5u);
  EXPECT_EQ(stmt.fields[1].name, "y");
  EXPECT_EQ(stmt.fields[1].expr.sql, "g::text");
  EXPECT_EQ(stmt.fields[2].expr.sql, "SUBSTRING(h FROM 2 FOR 3)");
}

TEST(LangParser, CommentsAreIgnoredBetweenClauses) {
  TransformStmt stmt = transform(
      "-- leading comment\nTRANSFORM t /* target */ FROM s\n-- note, WHERE\nSELECT a AS a");
  EXPECT_EQ(stmt.target.name, "t");
  ASSERT_EQ(stmt.fields.size(), 1u);
  EXPECT_FALSE(stmt.where.has_value());
}

TEST(LangParser, PositionsAreByteOffsetsInTheStatement) {
  const std::string text = "TRANSFORM t FROM s SELECT a + s.b AS x";
  TransformStmt stmt = transform(text);
  const Field& field = stmt.fields[0];
  EXPECT_EQ(field.expr.position, static_cast<int>(text.find("a + s.b")));
  EXPECT_EQ(field.name_position, static_cast<int>(text.find("x")));
  ASSERT_EQ(field.expr.columns.size(), 2u);
  EXPECT_EQ(field.expr.columns[0].position, static_cast<int>(text.find("a + ")));
  EXPECT_EQ(field.expr.columns[1].position, static_cast<int>(text.find("s.b")));
  EXPECT_EQ(field.expr.columns[1].qualifier, "s");
}

TEST(LangParser, TrailingSemicolonIsAccepted) {
  TransformStmt stmt = transform("TRANSFORM t FROM s SELECT a AS a;");
  EXPECT_EQ(stmt.fields[0].name, "a");
}

TEST(LangParser, PauseAndResumeAddresses) {
  auto pause = std::get<PauseStmt>(parse_statement("pause transform Totals"));
  EXPECT_EQ(pause.target.name, "totals");
  EXPECT_FALSE(pause.target.schema.has_value());
  EXPECT_FALSE(pause.column.has_value());

  auto column = std::get<PauseStmt>(parse_statement("PAUSE TRANSFORM totals.\"Avg\""));
  EXPECT_EQ(column.target.name, "totals");
  EXPECT_EQ(column.column, "Avg");

  auto resume = std::get<ResumeStmt>(parse_statement("RESUME TRANSFORM app.totals.avg"));
  EXPECT_EQ(resume.target.schema, "app");
  EXPECT_EQ(resume.target.name, "totals");
  EXPECT_EQ(resume.column, "avg");
}

TEST(LangParser, DropTransform) {
  auto drop = std::get<DropTransformStmt>(parse_statement("DROP TRANSFORM app.Totals"));
  EXPECT_EQ(drop.target.schema, "app");
  EXPECT_EQ(drop.target.name, "totals");
  auto bare = std::get<DropTransformStmt>(parse_statement("drop transform totals"));
  EXPECT_FALSE(bare.target.schema.has_value());
}

TEST(LangParser, RefusesMissingFieldAlias) {
  Error error = parse_error("TRANSFORM t FROM s SELECT a AS a, b + 1");
  expect_message(error, "\"b + 1\"");
  expect_message(error, "add AS name");
  expect_message(error, "1:35");
}

TEST(LangParser, RefusesMissingNameAfterAs) {
  expect_message(parse_error("TRANSFORM t FROM s SELECT a AS, b AS b"),
                 "expected a field name after AS at 1:31, found \",\"");
}

TEST(LangParser, RefusesSubquery) {
  Error error = parse_error("TRANSFORM t FROM s SELECT (SELECT max(x) FROM u) AS m");
  expect_message(error, "subqueries are not allowed");
  expect_message(error, "1:27");
}

TEST(LangParser, RefusesWindowFunction) {
  expect_message(parse_error("TRANSFORM t FROM s SELECT sum(x) OVER () AS m"), "window functions");
}

TEST(LangParser, RefusesQueryParameter) {
  Error error = parse_error("TRANSFORM t FROM s SELECT a + $1 AS m");
  expect_message(error, "query parameters");
  expect_message(error, "1:31");
}

TEST(LangParser, RefusesCurrentDate) {
  Error error = parse_error("TRANSFORM t FROM s SELECT a AS a WHERE d < current_date");
  expect_message(error, "current_date is not allowed");
  expect_message(error, "1:44");
}

TEST(LangParser, RefusesSecondStatement) {
  Error error = parse_error("TRANSFORM t FROM s SELECT 1; DROP TABLE t AS x");
  expect_message(error, "\";\" at 1:28");
}

TEST(LangParser, RefusesFromInsideAnExpression) {
  Error error = parse_error("TRANSFORM t FROM s SELECT x FROM y AS z");
  expect_message(error, "the text contains FROM");
  expect_message(error, "\"x FROM y\"");
}

TEST(LangParser, RefusesUnterminatedString) {
  Error error = parse_error("TRANSFORM t FROM s\nSELECT 'abc AS a");
  expect_message(error, "unterminated quoted string");
  expect_message(error, "2:8");
}

TEST(LangParser, RefusesUnterminatedQuotedIdentifier) {
  expect_message(parse_error("TRANSFORM \"t FROM s SELECT a AS a"),
                 "unterminated quoted identifier");
}

TEST(LangParser, RefusesUnknownStatementListingValidOnes) {
  Error error = parse_error("CREATE TABLE x (a int)");
  expect_message(error, "unknown statement \"CREATE\" at 1:1");
  expect_message(error,
                 "TRANSFORM, ALTER TRANSFORM, PAUSE TRANSFORM, RESUME TRANSFORM, DROP TRANSFORM, "
                 "RELATIONSHIP or DROP RELATIONSHIP");
}

TEST(LangParser, RefusesTrailingGarbageAfterFieldName) {
  expect_message(parse_error("TRANSFORM t FROM s SELECT a AS b c"),
                 "unexpected \"c\" at 1:34 after field name \"b\"");
}

TEST(LangParser, RefusesTrailingGarbageAfterDrop) {
  expect_message(parse_error("DROP TRANSFORM t extra"), "unexpected \"extra\" at 1:18");
}

TEST(LangParser, RefusesTrailingGarbageInWhere) {
  expect_message(parse_error("TRANSFORM t FROM s SELECT a AS a WHERE a > 1 junk"), "junk");
}

TEST(LangParser, RefusesEmptyInput) {
  expect_message(parse_error(""), "empty statement");
  expect_message(parse_error("  -- only a comment\n"), "empty statement");
}

TEST(LangParser, ReportsExpectedSelectAfterFrom) {
  expect_message(parse_error("TRANSFORM t FROM s a WHERE x"),
                 "expected SELECT after FROM clause at 1:22, found \"WHERE\"");
}

TEST(LangParser, RefusesMissingFrom) {
  expect_message(parse_error("TRANSFORM t SELECT a AS a"),
                 "expected FROM after the target name at 1:13, found \"SELECT\"");
}

TEST(LangParser, ParsesJoinsInOrder) {
  auto stmt = std::get<TransformStmt>(
      parse_statement("TRANSFORM t FROM orders o JOIN customers AS c ON c.id = o.customer_id "
                      "LEFT OUTER JOIN regions r ON r.id = c.region_id AND r.tenant = o.tenant "
                      "INNER JOIN s.products p ON p.id = o.product_id SELECT c.name AS name"));
  ASSERT_EQ(stmt.joins.size(), 3u);
  EXPECT_FALSE(stmt.joins[0].left_outer);
  EXPECT_EQ(stmt.joins[0].table.name, "customers");
  EXPECT_EQ(stmt.joins[0].alias, "c");
  ASSERT_EQ(stmt.joins[0].on.size(), 1u);
  EXPECT_EQ(*stmt.joins[0].on[0].left.qualifier, "c");
  EXPECT_EQ(stmt.joins[0].on[0].left.column, "id");
  EXPECT_EQ(stmt.joins[0].on[0].right.column, "customer_id");
  EXPECT_TRUE(stmt.joins[1].left_outer);
  ASSERT_EQ(stmt.joins[1].on.size(), 2u);
  EXPECT_EQ(*stmt.joins[1].on[1].right.qualifier, "o");
  EXPECT_EQ(stmt.joins[2].table.schema, "s");
  EXPECT_EQ(stmt.joins[2].alias, "p");
  EXPECT_EQ(stmt.alias, "o");
}

TEST(LangParser, RefusesJoinFormsOtherThanInnerAndLeft) {
  expect_message(parse_error("TRANSFORM t FROM s RIGHT JOIN c ON s.c = c.id SELECT a AS a"),
                 "\"RIGHT\" joins are not supported at 1:20");
  expect_message(parse_error("TRANSFORM t FROM s CROSS JOIN c SELECT a AS a"),
                 "\"CROSS\" joins are not supported");
  expect_message(parse_error("TRANSFORM t FROM s JOIN c USING (id) SELECT a AS a"),
                 "JOIN ... USING is not supported");
  expect_message(parse_error("TRANSFORM t FROM s JOIN c ON c.id = s.c + 1 SELECT a AS a"),
                 "expected SELECT after the join's ON");
  expect_message(parse_error("TRANSFORM t FROM s JOIN c ON c.id > s.c SELECT a AS a"),
                 "expected \"=\" in ON");
  expect_message(parse_error("TRANSFORM t FROM s JOIN c ON id = s.c SELECT a AS a"),
                 "ON column at 1:30 must be written alias.column");
  expect_message(parse_error("TRANSFORM t FROM s SELECT a AS a JOIN c ON c.id = s.c"),
                 "found JOIN at 1:34 after SELECT");
}

TEST(LangParser, RefusesGroupByAfterSelect) {
  expect_message(
      parse_error("TRANSFORM t FROM s SELECT x AS y GROUP BY x"),
      "found GROUP BY at 1:34 after SELECT; it must come between the FROM clause and SELECT");
}

TEST(LangParser, ParsesAlterClausesInOrder) {
  auto stmt = std::get<AlterTransformStmt>(
      parse_statement("alter transform s.Lines ADD (qty + 10) AS qty10, DROP Qty, ALTER \"Cat\" "
                      "AS upper(name)"));
  EXPECT_EQ(stmt.target.schema, "s");
  EXPECT_EQ(stmt.target.name, "lines");
  ASSERT_EQ(stmt.clauses.size(), 3u);
  EXPECT_EQ(stmt.clauses[0].kind, AlterClause::Kind::add);
  EXPECT_EQ(stmt.clauses[0].name, "qty10");
  ASSERT_TRUE(stmt.clauses[0].expr);
  EXPECT_EQ(stmt.clauses[0].expr->sql, "qty + 10");
  EXPECT_EQ(stmt.clauses[1].kind, AlterClause::Kind::drop);
  EXPECT_EQ(stmt.clauses[1].name, "qty");
  EXPECT_FALSE(stmt.clauses[1].expr);
  EXPECT_EQ(stmt.clauses[2].kind, AlterClause::Kind::alter);
  EXPECT_EQ(stmt.clauses[2].name, "Cat");
  EXPECT_EQ(stmt.clauses[2].expr->sql, "upper(name)");
  EXPECT_EQ(stmt.clauses[2].position, 59);
}

TEST(LangParser, RefusesMalformedAlterClauses) {
  expect_message(parse_error("ALTER TRANSFORM t"),
                 "expected ADD, DROP or ALTER after the ALTER TRANSFORM target at 1:18");
  expect_message(parse_error("ALTER TRANSFORM t RENAME a TO b"),
                 "expected ADD, DROP or ALTER after the ALTER TRANSFORM target at 1:19, found "
                 "\"RENAME\"");
  expect_message(parse_error("ALTER TRANSFORM t ADD a + 1"), "has no name; add AS name");
  expect_message(parse_error("ALTER TRANSFORM t DROP a, "),
                 "expected ADD, DROP or ALTER after \",\"");
  expect_message(parse_error("ALTER TRANSFORM t DROP a b"),
                 "unexpected \"b\" at 1:26 after field name \"a\"");
  expect_message(parse_error("ALTER TRANSFORM t ALTER a b + 1"), "expected AS after ALTER a");
  expect_message(parse_error("ALTER TRANSFORM t ALTER a AS"), "expected an expression after AS");
  expect_message(parse_error("ALTER t ADD 1 AS b"), "expected TRANSFORM after ALTER");
  expect_message(parse_error("ALTER TRANSFORM a.b.c DROP x"), "too many name parts");
}

TEST(LangParser, ParsesRelationshipsAndTheirDrop) {
  auto rel = std::get<lang::RelationshipStmt>(
      lang::parse_statement("RELATIONSHIP Author FROM posts.author_id TO app.Users.id"));
  EXPECT_EQ(rel.name, "author");
  EXPECT_FALSE(rel.from.table.schema);
  EXPECT_EQ(rel.from.table.name, "posts");
  EXPECT_EQ(rel.from.column, "author_id");
  EXPECT_EQ(*rel.to.table.schema, "app");
  EXPECT_EQ(rel.to.table.name, "users");
  EXPECT_EQ(rel.to.column, "id");
  auto drop = std::get<lang::DropRelationshipStmt>(
      lang::parse_statement("DROP RELATIONSHIP s.posts.author"));
  EXPECT_EQ(*drop.from_table.schema, "s");
  EXPECT_EQ(drop.from_table.name, "posts");
  EXPECT_EQ(drop.name, "author");
  auto bare =
      std::get<lang::DropRelationshipStmt>(lang::parse_statement("DROP RELATIONSHIP posts.author"));
  EXPECT_FALSE(bare.from_table.schema);
}

TEST(LangParser, RefusesMalformedRelationships) {
  expect_message(parse_error("RELATIONSHIP author FROM posts TO users.id"),
                 "1 name part(s) after FROM at 1:26; expected [schema.]table.column");
  expect_message(parse_error("RELATIONSHIP author FROM posts.author_id users.id"),
                 "expected TO after the FROM column");
  expect_message(parse_error("RELATIONSHIP FROM posts.a TO users.id"),
                 "expected a relationship name after RELATIONSHIP at 1:14");
  expect_message(parse_error("RELATIONSHIP a FROM p.x TO u.id extra"), "after the TO column");
  expect_message(parse_error("DROP RELATIONSHIP author"),
                 "expected [schema.]from_table.name (a relationship is named on its FROM table)");
}

TEST(LangParser, RefusesTooManyNameParts) {
  expect_message(parse_error("TRANSFORM a.b.c FROM s SELECT x AS y"), "too many name parts");
  expect_message(parse_error("DROP TRANSFORM a.b.c"), "too many name parts");
  expect_message(parse_error("PAUSE TRANSFORM a.b.c.d"), "too many name parts");
}

TEST(LangParser, RefusesReservedWordAsName) {
  Error error = parse_error("TRANSFORM t FROM s SELECT a AS select");
  expect_message(error, "reserved word");
  expect_message(error, "1:32");
  EXPECT_EQ(transform("TRANSFORM t FROM s SELECT a AS \"select\"").fields[0].name, "select");
}

TEST(LangParser, RefusesOverlongName) {
  expect_message(parse_error("TRANSFORM " + std::string(64, 'n') + " FROM s SELECT a AS a"),
                 "at most 63 bytes");
}

TEST(LangParser, RefusesUnbalancedParentheses) {
  expect_message(parse_error("TRANSFORM t FROM s SELECT (a + 1 AS a"), "unclosed \"(\" at 1:27");
  expect_message(parse_error("TRANSFORM t FROM s SELECT a) AS a"), "unbalanced \")\" at 1:28");
}

TEST(LangParser, RefusesEmptyKeyList) {
  expect_message(parse_error("TRANSFORM t FROM s KEY () SELECT a AS a"),
                 "expected a key column name");
}

TEST(LangParser, ReportsLineAndColumnOnLaterLines) {
  Error error = parse_error("TRANSFORM t\nFROM s\nSELECT a AS a,\n  (SELECT 1) AS b");
  expect_message(error, "subqueries are not allowed");
  expect_message(error, "4:3");
}

TEST(LangSplit, SplitsAtTopLevelSemicolons) {
  auto parts = split_statements(
      "TRANSFORM a FROM s SELECT ';' AS x;\n"
      "-- comment; with a semicolon\n"
      "TRANSFORM b FROM s SELECT $$;$$ AS \"y;z\" /* ; */;\n"
      ";;  \n"
      "DROP TRANSFORM c");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], "TRANSFORM a FROM s SELECT ';' AS x");
  EXPECT_EQ(parts[1], "TRANSFORM b FROM s SELECT $$;$$ AS \"y;z\"");
  EXPECT_EQ(parts[2], "DROP TRANSFORM c");
  EXPECT_EQ(std::get<TransformStmt>(parse_statement(parts[1])).fields[0].name, "y;z");
}

TEST(LangSplit, EmptyInputGivesNoStatements) {
  EXPECT_TRUE(split_statements("").empty());
  EXPECT_TRUE(split_statements(" ; -- nothing\n ;").empty());
}

TEST(LangSplit, RefusesUnterminatedDollarQuote) {
  try {
    split_statements("DROP TRANSFORM a;\nTRANSFORM b FROM s SELECT $$x AS y");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::parse);
    EXPECT_NE(std::string(error.what()).find("2:27"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace trellis::lang
