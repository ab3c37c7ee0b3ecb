// SQL injection attempts through the statement language: hostile text in
// quoted names (targets, schemas, sources, columns, key columns, an enum key
// type, fields), in string literals, in source data and in expressions. Each
// attempt is either refused with trellis::Error or stored and run
// harmlessly: the canary table `victim` survives every case, and an accepted
// case goes live, converges after changes and equals its definition run as a
// plain SELECT, with the hostile text showing up verbatim as a name or value.
#include <chrono>
#include <initializer_list>
#include <string>

#include "support/harness.hpp"

namespace trellis::test {
namespace {

using std::chrono::seconds;
using std::chrono::steady_clock;

class Injection : public TrellisTest {
 protected:
  void SetUp() override {
    TrellisTest::SetUp();
    sql("CREATE TABLE victim (id int PRIMARY KEY, note text);"
        "INSERT INTO victim VALUES (1, 'alive'), (2, 'alive')");
  }

  void TearDown() override {
    if (app_) expect_victim_alive();
    TrellisTest::TearDown();
  }

  void expect_victim_alive() {
    ASSERT_TRUE(query("SELECT to_regclass('public.victim') IS NOT NULL").get_bool(0, 0))
        << "the canary table victim was dropped";
    EXPECT_EQ(query("SELECT count(*) FROM victim WHERE note = 'alive'").get_int(0, 0), 2)
        << "the canary table victim was changed";
  }

  bool relation_exists(const std::string& schema, const std::string& name) {
    return query("SELECT to_regclass(format('%I.%I', '" + escape(schema) + "', '" + escape(name) +
                 "')) IS NOT NULL")
        .get_bool(0, 0);
  }

  // `text` as the inside of a SQL string literal.
  static std::string escape(const std::string& text) {
    std::string out;
    for (char c : text) {
      out += c;
      if (c == '\'') out += '\'';
    }
    return out;
  }

  // Applies `statement`, which must be refused with one of `codes`; nothing
  // may have been created under `target` (in public), and victim survives.
  void expect_refused(Trellis& t, const std::string& statement, const std::string& target,
                      std::initializer_list<ErrorCode> codes = {ErrorCode::parse,
                                                                ErrorCode::validation}) {
    SCOPED_TRACE(statement);
    try {
      auto applied = t.apply(statement);
      ADD_FAILURE() << "accepted (" << applied.kind << " " << applied.target << ")";
    } catch (const Error& e) {
      EXPECT_FALSE(std::string(e.what()).empty());
      bool expected = false;
      for (ErrorCode code : codes) expected = expected || e.code() == code;
      EXPECT_TRUE(expected) << "code " << to_string(e.code()) << ": " << e.what();
    }
    if (!target.empty()) {
      EXPECT_FALSE(relation_exists("public", target)) << "a refused statement created " << target;
    }
    expect_victim_alive();
  }

  // What holds `target` up, for failure messages.
  static std::string hold_ups(Trellis& t, const std::string& target) {
    auto s = t.status(target);
    if (!s) return "no status";
    std::string out = "status " + s->status;
    if (s->capture_failure) {
      out += "; capture_failure " + s->capture_failure->kind + ": " + s->capture_failure->error;
    }
    if (s->capture_wait) out += "; capture_wait on " + s->capture_wait->table;
    if (s->backfill_failure) out += "; backfill_failure: " + s->backfill_failure->error;
    if (s->drain_failure) out += "; drain_failure: " + s->drain_failure->error;
    return out;
  }

  // An accepted transform: live, converged, equal to its definition.
  void expect_live_and_equal(Trellis& t, const std::string& target) {
    await_status(t, target, "live", seconds(30));
    if (auto s = t.status(target); !s || s->status != "live") {
      ADD_FAILURE() << target << ": " << hold_ups(t, target);
    }
    await_converged(t, seconds(30));
    expect_oracle(target);
    expect_victim_alive();
  }
};

// --- Names ------------------------------------------------------------------

TEST_F(Injection, QuotedTargetAndFieldNamesHoldingSqlBecomeNamesThroughTheLifecycle) {
  sql("CREATE TABLE src (id int PRIMARY KEY, v text);"
      "INSERT INTO src VALUES (1, 'a'), (2, 'b')");
  auto t = start();
  const std::string target = "t\"; DROP TABLE victim; --";
  auto applied = t->apply(
      R"(TRANSFORM "t""; DROP TABLE victim; --" FROM src )"
      R"(SELECT v AS "f""; DROP TABLE victim; --", v || '!' AS "g'); DROP TABLE victim; --")");
  EXPECT_EQ(applied.target, "public." + target);
  expect_live_and_equal(*t, target);
  EXPECT_EQ(query("SELECT string_agg(column_name::text, '|' ORDER BY ordinal_position) FROM "
                  "information_schema.columns WHERE table_schema = 'public' AND table_name = '" +
                  escape(target) + "'")
                .get(0, 0),
            "id|f\"; DROP TABLE victim; --|g'); DROP TABLE victim; --");

  sql("INSERT INTO src VALUES (3, 'c'); UPDATE src SET v = 'z' WHERE id = 1;"
      "DELETE FROM src WHERE id = 2");
  await_converged(*t);
  expect_oracle(target);
  EXPECT_EQ(query(R"(SELECT string_agg("f""; DROP TABLE victim; --", ',' ORDER BY id) )"
                  R"(FROM "t""; DROP TABLE victim; --")")
                .get(0, 0),
            "z,c");

  // RESUME re-parses the stored (normalised) statement with these names.
  EXPECT_EQ(t->apply(R"(PAUSE TRANSFORM "t""; DROP TABLE victim; --")").status, "paused");
  EXPECT_EQ(t->apply(R"(RESUME TRANSFORM "t""; DROP TABLE victim; --")").status,
            "waiting_to_backfill");
  expect_live_and_equal(*t, target);

  t->apply(R"(PAUSE TRANSFORM "t""; DROP TABLE victim; --")");
  EXPECT_EQ(t->apply(R"(DROP TRANSFORM "t""; DROP TABLE victim; --")").status, "dropped");
  EXPECT_FALSE(relation_exists("public", target));
  EXPECT_TRUE(relation_exists("public", "src"));
}

TEST_F(Injection, SchemaSourceAliasAndColumnNamesWithQuotesAndSemicolonsAreReadAsNames) {
  sql(R"(CREATE SCHEMA "s; DROP TABLE victim; --";)"
      R"(CREATE TABLE "s; DROP TABLE victim; --"."src'); DROP TABLE victim; --" ()"
      R"(  "id""; DROP TABLE victim" int PRIMARY KEY, "v'; DROP TABLE victim; --" text);)"
      R"(INSERT INTO "s; DROP TABLE victim; --"."src'); DROP TABLE victim; --" )"
      R"(VALUES (1, 'one'), (2, NULL))");
  auto t = start();
  t->apply(R"(TRANSFORM "out; DROP TABLE victim" )"
           R"(FROM "s; DROP TABLE victim; --"."src'); DROP TABLE victim; --" AS "a""b" )"
           R"(SELECT upper("a""b"."v'; DROP TABLE victim; --") AS loud )"
           R"(WHERE "a""b"."id""; DROP TABLE victim" > 0)");
  const std::string target = "out; DROP TABLE victim";
  expect_live_and_equal(*t, target);
  EXPECT_EQ(query(R"(SELECT string_agg("id""; DROP TABLE victim" || '=' || coalesce(loud, 'null'),)"
                  R"( ',' ORDER BY "id""; DROP TABLE victim") FROM "out; DROP TABLE victim")")
                .get(0, 0),
            "1=ONE,2=null");

  sql(R"(UPDATE "s; DROP TABLE victim; --"."src'); DROP TABLE victim; --" )"
      R"(SET "v'; DROP TABLE victim; --" = 'two' WHERE "id""; DROP TABLE victim" = 2;)"
      R"(INSERT INTO "s; DROP TABLE victim; --"."src'); DROP TABLE victim; --" VALUES (3, 'x'))");
  await_converged(*t);
  expect_oracle(target);
  EXPECT_EQ(query(R"(SELECT count(*) FROM "out; DROP TABLE victim")").get_int(0, 0), 3);
}

TEST_F(Injection, KeyColumnsAndAnEnumKeyTypeNamedWithSqlAreQuotedEverywhere) {
  sql(R"(CREATE TYPE "mood""; DROP TABLE victim; --" AS ENUM ('ok', 'x''); DROP TABLE victim; --');)"
      R"(CREATE TABLE moods (m "mood""; DROP TABLE victim; --" NOT NULL,)"
      R"(  "k'; DROP TABLE victim; --" int NOT NULL, v text,)"
      R"(  UNIQUE (m, "k'; DROP TABLE victim; --"));)"
      R"(INSERT INTO moods VALUES ('ok', 1, 'a'), ('x''); DROP TABLE victim; --', 1, 'b'))");
  auto t = start();
  t->apply(R"(TRANSFORM by_mood FROM moods KEY (m, "k'; DROP TABLE victim; --") SELECT v AS v)");
  expect_live_and_equal(*t, "by_mood");

  sql(R"(UPDATE moods SET v = 'c' WHERE m = 'x''); DROP TABLE victim; --';)"
      R"(INSERT INTO moods VALUES ('x''); DROP TABLE victim; --', 2, 'd');)"
      R"(DELETE FROM moods WHERE m = 'ok')");
  await_converged(*t);
  expect_oracle("by_mood");
  EXPECT_EQ(query(R"(SELECT string_agg(m::text || '/' || "k'; DROP TABLE victim; --" || '/' || v,)"
                  R"( ',' ORDER BY "k'; DROP TABLE victim; --") FROM by_mood)")
                .get(0, 0),
            "x'); DROP TABLE victim; --/1/c,x'); DROP TABLE victim; --/2/d");
}

// PostgreSQL's dollar-quote tag Trellis wraps its capture function bodies in
// ($trellis$, src/compile/capture.cpp), inside a column name the capture
// function embeds as a string literal.
TEST_F(Injection, SourceColumnNamedWithTheCaptureDollarQuoteTagIsCapturedVerbatim) {
  sql(R"(CREATE TABLE dq (id int PRIMARY KEY, "$trellis$; DROP TABLE victim; --" text);)"
      R"(INSERT INTO dq VALUES (1, 'a'))");
  auto t = start();
  t->apply(R"(TRANSFORM dq_out FROM dq SELECT "$trellis$; DROP TABLE victim; --" AS v)");
  expect_live_and_equal(*t, "dq_out");
  sql(R"(UPDATE dq SET "$trellis$; DROP TABLE victim; --" = 'b'; INSERT INTO dq VALUES (2, 'c'))");
  await_converged(*t);
  expect_oracle("dq_out");
  EXPECT_EQ(query("SELECT string_agg(v, ',' ORDER BY id) FROM dq_out").get(0, 0), "b,c");
}

// Whatever happens to such a table, other transforms keep working.
TEST_F(Injection, HostileSourceColumnNameDoesNotHoldUpOtherTransforms) {
  sql(R"(CREATE TABLE dq (id int PRIMARY KEY, "$trellis$; DROP TABLE victim; --" text);)"
      R"(INSERT INTO dq VALUES (1, 'a');)"
      "CREATE TABLE plain_src (id int PRIMARY KEY, v text); INSERT INTO plain_src VALUES (1, 'p')");
  auto t = start();
  t->apply(R"(TRANSFORM dq_out FROM dq SELECT "$trellis$; DROP TABLE victim; --" AS v)");
  t->apply("TRANSFORM plain_out FROM plain_src SELECT upper(v) AS v");
  expect_live_and_equal(*t, "plain_out");
  sql("INSERT INTO plain_src VALUES (2, 'q')");
  await_converged(*t);
  expect_oracle("plain_out");
}

TEST_F(Injection, PauseResumeAndDropNeverTouchAPlainTableOfTheGivenName) {
  sql("CREATE TABLE src (id int PRIMARY KEY, v text); INSERT INTO src VALUES (1, 'a')");
  auto t = start();
  expect_refused(*t, "PAUSE TRANSFORM victim", "", {ErrorCode::not_found});
  expect_refused(*t, "RESUME TRANSFORM victim", "", {ErrorCode::not_found});
  expect_refused(*t, R"(PAUSE TRANSFORM "victim""; DROP TABLE victim; --")", "",
                 {ErrorCode::not_found});
  // DROP of something that is not a transform is an idempotent no-op.
  EXPECT_EQ(t->apply("DROP TRANSFORM victim").status, "dropped");
  expect_victim_alive();
  EXPECT_EQ(t->apply("DROP TRANSFORM public.victim").status, "dropped");
  expect_victim_alive();
  EXPECT_EQ(t->apply(R"(DROP TRANSFORM "victim; DROP TABLE victim")").status, "dropped");
  expect_victim_alive();
  // Defining onto the canary refuses rather than touching it.
  expect_refused(*t, "TRANSFORM victim FROM src SELECT v AS note", "",
                 {ErrorCode::conflict, ErrorCode::validation});
  expect_refused(*t, "TRANSFORM victim ADOPT EXISTING TABLE FROM src SELECT v AS note", "",
                 {ErrorCode::conflict, ErrorCode::validation, ErrorCode::parse});
}

// --- String literals and data -----------------------------------------------

TEST_F(Injection, StringLiteralsWithQuotesAndSemicolonsAreStoredAsValues) {
  sql("CREATE TABLE src (id int PRIMARY KEY, v text);"
      "INSERT INTO src VALUES (1, 'a'), (2, 'x''); DROP TABLE victim; --'),"
      "  (3, '''; DROP TABLE victim; --')");
  auto t = start();
  t->apply(R"(TRANSFORM tagged FROM src SELECT )"
           R"(v || 'x''; DROP TABLE victim; --' AS plain, )"
           R"(E'it\'s; DROP TABLE victim; --' AS escaped, )"
           R"($$'); DROP TABLE victim; --$$ AS dollar, )"
           R"($trellis$'); DROP TABLE victim; --$trellis$ || v AS tagged_dollar )"
           R"(WHERE v <> 'x''); DROP TABLE victim; --')");
  expect_live_and_equal(*t, "tagged");
  auto row = query("SELECT plain, escaped, dollar, tagged_dollar FROM tagged WHERE id = 1");
  ASSERT_EQ(row.rows(), 1);
  EXPECT_EQ(row.get(0, 0), "ax'; DROP TABLE victim; --");
  EXPECT_EQ(row.get(0, 1), "it's; DROP TABLE victim; --");
  EXPECT_EQ(row.get(0, 2), "'); DROP TABLE victim; --");
  EXPECT_EQ(row.get(0, 3), "'); DROP TABLE victim; --a");
  EXPECT_EQ(query("SELECT string_agg(id::text, ',' ORDER BY id) FROM tagged").get(0, 0), "1,3");
  EXPECT_EQ(query("SELECT plain FROM tagged WHERE id = 3").get(0, 0),
            "'; DROP TABLE victim; --x'; DROP TABLE victim; --");

  // Hostile source data flows through capture and drain as data.
  sql("INSERT INTO src VALUES (4, '$trellis$; DROP TABLE victim; --');"
      "UPDATE src SET v = '\\'');DROP TABLE victim;--' WHERE id = 1;"
      "UPDATE src SET v = 'a' WHERE id = 2");
  await_converged(*t);
  expect_oracle("tagged");
  EXPECT_EQ(query("SELECT string_agg(id::text, ',' ORDER BY id) FROM tagged").get(0, 0), "1,2,3,4");
  EXPECT_EQ(query("SELECT tagged_dollar FROM tagged WHERE id = 1").get(0, 0),
            "'); DROP TABLE victim; --\\');DROP TABLE victim;--");
}

// --- Expressions --------------------------------------------------------------

TEST_F(Injection, SecondStatementSmuggledAfterASemicolonIsRefused) {
  sql("CREATE TABLE src (id int PRIMARY KEY, v text); INSERT INTO src VALUES (1, 'a')");
  auto t = start();
  expect_refused(*t, "TRANSFORM t1 FROM src SELECT 1; DROP TABLE victim AS x", "t1");
  expect_refused(*t, "TRANSFORM t2 FROM src SELECT v AS v; DROP TABLE victim; --", "t2");
  expect_refused(*t, "TRANSFORM t3 FROM src SELECT v AS v WHERE true; DROP TABLE victim", "t3");
  // A backslash does not escape a quote in a standard string: the `;` is live.
  expect_refused(*t, R"(TRANSFORM t4 FROM src SELECT '\'; DROP TABLE victim; --' AS b)", "t4");
  expect_refused(*t, "PAUSE TRANSFORM t5; DROP TABLE victim", "");
  expect_refused(*t, "DROP TRANSFORM t6; DROP TABLE victim", "");
}

TEST_F(Injection, ExpressionsBreakingOutOfTheirClauseAreRefused) {
  sql("CREATE TABLE src (id int PRIMARY KEY, v text); INSERT INTO src VALUES (1, 'a')");
  auto t = start();
  expect_refused(*t, "TRANSFORM t1 FROM src SELECT v) FROM victim; -- AS x", "t1");
  expect_refused(*t, "TRANSFORM t2 FROM src SELECT v FROM victim AS x", "t2");
  expect_refused(*t, "TRANSFORM t3 FROM src SELECT (SELECT note FROM victim LIMIT 1) AS x", "t3");
  expect_refused(
      *t, "TRANSFORM t4 FROM src SELECT v AS v WHERE true) UNION SELECT note FROM victim --", "t4");
  expect_refused(*t, "TRANSFORM t5 FROM src SELECT v AS v WHERE id IN (SELECT id FROM victim)",
                 "t5");
  expect_refused(*t, "TRANSFORM t6 FROM src SELECT v AS v WHERE true UNION SELECT note FROM victim",
                 "t6");
  expect_refused(*t, R"(TRANSFORM t7 FROM src SELECT v COLLATE "C""); DROP TABLE victim; --" AS x)",
                 "t7");
  expect_refused(*t, R"(TRANSFORM t8 FROM src SELECT "lower""(v); DROP TABLE victim; --"(v) AS x)",
                 "t8");
  expect_refused(*t, R"(TRANSFORM t9 FROM src SELECT v::"text""; DROP TABLE victim; --" AS x)",
                 "t9");
  expect_refused(*t, "TRANSFORM t10 FROM src SELECT v AS v, id AS x) FROM victim --", "t10");
}

TEST_F(Injection, VolatilePgSleepIsRefusedWithoutSleeping) {
  sql("CREATE TABLE src (id int PRIMARY KEY, v text);"
      "INSERT INTO src SELECT g, 'v' FROM generate_series(1, 5) g");
  auto t = start();
  auto started = steady_clock::now();
  expect_refused(*t, "TRANSFORM t1 FROM src SELECT pg_sleep(10) AS z", "t1");
  expect_refused(*t, "TRANSFORM t2 FROM src SELECT v AS v WHERE pg_sleep(10) IS NULL", "t2");
  expect_refused(*t, "TRANSFORM t3 FROM src SELECT pg_catalog.pg_sleep(10) AS z", "t3");
  expect_refused(*t, "TRANSFORM t4 FROM src SELECT v || pg_sleep(10)::text AS z", "t4");
  expect_refused(*t, "TRANSFORM t5 FROM src SELECT coalesce(v, pg_sleep(10)::text) AS z", "t5");
  EXPECT_LT(steady_clock::now() - started, seconds(10)) << "pg_sleep ran during define";
}

TEST_F(Injection, CommentsNeitherHideNorAddFields) {
  sql("CREATE TABLE src (id int PRIMARY KEY, v text);"
      "INSERT INTO src VALUES (1, 'a'), (2, '/* not a comment */'), (3, '-- nor this')");
  auto t = start();
  expect_refused(*t, "TRANSFORM t1 FROM src SELECT v /* */ , (SELECT 1) AS x", "t1");
  expect_refused(*t, "TRANSFORM t2 FROM src SELECT v /* */ AS a, (SELECT 1) AS x", "t2");
  expect_refused(*t, "TRANSFORM t3 FROM src SELECT v AS a /* unterminated , (SELECT 1) AS x", "t3");

  t->apply(
      "TRANSFORM t4 FROM src SELECT v AS a /*, (SELECT count(*) FROM victim) AS b */ "
      "-- , note AS c\n"
      "WHERE v <> '/* not a comment */' AND v <> '-- nor this' -- ; DROP TABLE victim");
  expect_live_and_equal(*t, "t4");
  EXPECT_EQ(query("SELECT string_agg(column_name::text, '|' ORDER BY ordinal_position) FROM "
                  "information_schema.columns WHERE table_schema = 'public' AND table_name = 't4'")
                .get(0, 0),
            "id|a");
  EXPECT_EQ(query("SELECT string_agg(a, ',' ORDER BY id) FROM t4").get(0, 0), "a");
}

}  // namespace
}  // namespace trellis::test
