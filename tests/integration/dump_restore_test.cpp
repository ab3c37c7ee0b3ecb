// `Trellis::dump`, `trellis dump` and `trellis restore` (README, "Dump and
// restore"): the definitions of one database restored into another holding
// the same tables, every target rebuilt there and equal to its definition;
// a second restore changes nothing; a conflicting definition is named; the
// pg_dump recipe the script's header prints moves a whole database.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "lang/statement.hpp"
#include "support/cli_process.hpp"
#include "support/harness.hpp"
#include "testkit/server_bin.hpp"

namespace trellis::test {
namespace {

using namespace std::chrono_literals;

// The application's tables, the same in every database of a test.
constexpr const char* kTables = R"sql(
CREATE TABLE users (id int PRIMARY KEY, name text, country text);
CREATE TABLE posts (id int PRIMARY KEY, author_id int, title text, likes int, status text);
CREATE INDEX ON posts (author_id);
CREATE INDEX ON posts (status);
CREATE TABLE comments (id int PRIMARY KEY, post_id int, body text);
INSERT INTO users SELECT g, 'user ' || g, (ARRAY['fr','de','jp'])[1 + g % 3]
  FROM generate_series(1, 40) g;
INSERT INTO posts SELECT g, 1 + g % 45, 'post ' || g, g % 7,
  (ARRAY['draft','published','published'])[1 + g % 3] FROM generate_series(1, 300) g;
INSERT INTO comments SELECT g, 1 + g % 300, 'comment ' || g FROM generate_series(1, 500) g;
)sql";

// The lines of `text`.
std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The script without its comment lines (the statements, in order).
std::string statements_only(const std::string& script) {
  std::string out;
  for (const auto& line : lines(script))
    if (line.rfind("--", 0) != 0 && !line.empty()) out += line + "\n";
  return out;
}

std::string write_file(const std::string& stem, const std::string& text) {
  std::string path = temp_path(stem);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

class DumpRestore : public TrellisTest {
 protected:
  Outcome trellis(std::vector<std::string> args, const std::string& url,
                  std::chrono::seconds timeout = 180s) {
    return run_trellis(std::move(args), url, timeout);
  }

  // A database of the shared cluster with the application's tables.
  std::string database_with_tables() {
    std::string url = shared_cluster().create_database("dr");
    pg::Connection::open(url, {.search_path = "public"})->exec_script(kTables);
    return url;
  }

  static std::map<std::string, Definition> definitions_by_target(Trellis& t) {
    std::map<std::string, Definition> out;
    for (auto& d : t.definitions()) out[d.target] = d;
    return out;
  }

  // Database A (the fixture's): every kind of definition, one ALTERed, one
  // with a paused field, one paused, and a reader defined before the
  // transform whose target it reads now. Returns the handle (workers on).
  std::unique_ptr<Trellis> define_everything() {
    sql(kTables);
    sql("CREATE TABLE staging_src (id int PRIMARY KEY, name text);"
        "INSERT INTO staging_src SELECT g, 'staged ' || g FROM generate_series(1, 5) g");
    auto t = start();
    // Defined first, over a plain table that later gives way to a target.
    t->apply("TRANSFORM late_reader FROM staging_src SELECT upper(name) AS loud_name");
    t->apply("RELATIONSHIP author FROM posts.author_id TO users.id");
    t->apply(
        "TRANSFORM published FROM posts SELECT title AS title, likes * 2 AS double_likes "
        "WHERE status = 'published'");
    t->apply(
        "TRANSFORM likes_by_status FROM posts GROUP BY status SELECT COUNT(*) AS n, "
        "SUM(likes) AS likes");
    t->apply(
        "TRANSFORM post_authors FROM posts p JOIN users u ON u.id = p.author_id SELECT p.title "
        "AS title, u.name AS author");
    t->apply(
        "TRANSFORM post_view FROM posts SELECT title AS title, author.name AS author_name, "
        "author.country AS country");
    t->apply("TRANSFORM user_names FROM users SELECT upper(name) AS loud, country AS country");
    t->apply("TRANSFORM frozen FROM comments SELECT body AS body");
    for (auto target : {"published", "likes_by_status", "post_authors", "post_view", "user_names",
                        "frozen", "late_reader"})
      await_status(*t, target, "live");
    t->apply(
        "TRANSFORM country_counts FROM post_view GROUP BY country WITHOUT SOURCE INDEX SELECT "
        "COUNT(*) AS posts");
    t->apply("ALTER TRANSFORM published ADD upper(title) AS loud, DROP double_likes");
    t->apply("PAUSE TRANSFORM user_names.country");
    t->apply("PAUSE TRANSFORM frozen");
    // The reader's table is dropped (a disruption pauses the reader) and a
    // transform takes its name: the reader, older, now reads its target.
    sql("DROP TABLE staging_src");
    await_status(*t, "late_reader", "paused");
    t->apply("TRANSFORM staging_src FROM users SELECT name AS name WHERE id <= 5");
    await_status(*t, "published", "live");
    await_status(*t, "country_counts", "live");
    await_status(*t, "staging_src", "live");
    return t;
  }
};

TEST_F(DumpRestore, ARoundTripRebuildsEveryTargetInAnotherDatabaseAndASecondChangesNothing) {
  auto a = define_everything();
  std::string script = a->dump();

  // Current definitions, qualified, in dependency order, pauses after them.
  auto pos = [&](const std::string& needle) { return script.find(needle); };
  auto a_defs = definitions_by_target(*a);
  for (const auto& [target, d] : a_defs)
    EXPECT_NE(pos(d.statement + ";\n"), std::string::npos) << "missing " << target << "\n"
                                                           << script;
  EXPECT_NE(pos("upper(title) AS \"loud\""), std::string::npos) << script;
  EXPECT_EQ(pos("double_likes"), std::string::npos) << "the ALTER dropped it\n" << script;
  EXPECT_LT(pos("RELATIONSHIP \"author\" FROM \"public\".\"posts\".\"author_id\" TO "
                "\"public\".\"users\".\"id\";"),
            pos("TRANSFORM \"public\".\"published\""))
      << script;
  EXPECT_LT(pos("TRANSFORM \"public\".\"post_view\""),
            pos("TRANSFORM \"public\".\"country_counts\""));
  EXPECT_LT(pos("TRANSFORM \"public\".\"staging_src\""),
            pos("TRANSFORM \"public\".\"late_reader\""))
      << "the reader follows the transform whose target it reads, though defined earlier\n"
      << script;
  EXPECT_LT(pos("TRANSFORM \"public\".\"staging_src\""),
            pos("PAUSE TRANSFORM \"public\".\"frozen\";"));
  EXPECT_NE(pos("PAUSE TRANSFORM \"public\".\"user_names\".\"country\";"), std::string::npos);
  EXPECT_EQ(pos("PAUSE TRANSFORM \"public\".\"late_reader\""), std::string::npos)
      << "a failure is no operator's pause";
  EXPECT_NE(pos("-- public.late_reader is paused by a failure here (disruption"), std::string::npos)
      << script;
  EXPECT_NE(pos("--exclude-schema='\"trellis\"'"), std::string::npos) << script;
  EXPECT_NE(pos("-T '\"public\".\"likes_by_status__ledger\"'"), std::string::npos) << script;
  // Comments included, the splitter finds exactly the statements.
  EXPECT_EQ(lang::split_statements(script).size(), 1 + a_defs.size() + 2);

  std::string b = database_with_tables();
  std::string file = write_file("trellis-dump-", script);
  auto first = trellis({"restore", file, "--wait", "--timeout", "150"}, b);
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  auto out = lines(first.out);
  ASSERT_EQ(out.size(), 1 + a_defs.size() + 2) << first.out;
  EXPECT_EQ(out[0], "relationship public.posts.author: to_one");
  EXPECT_EQ(std::count_if(out.begin(), out.end(),
                          [](const std::string& l) { return l.rfind("transform ", 0) == 0; }),
            static_cast<long>(a_defs.size()))
      << first.out;

  Options ob = options();
  ob.url = b;
  auto tb = Trellis::connect(ob);
  auto b_defs = definitions_by_target(*tb);
  ASSERT_EQ(b_defs.size(), a_defs.size());
  for (const auto& [target, d] : a_defs) {
    ASSERT_TRUE(b_defs.count(target)) << target;
    EXPECT_EQ(b_defs[target].statement, d.statement) << target;
  }
  ASSERT_EQ(tb->relationships().size(), 1u);
  EXPECT_EQ(b_defs["public.frozen"].status, "paused");
  EXPECT_EQ(b_defs["public.user_names"].paused_columns, std::vector<std::string>{"country"});
  EXPECT_EQ(query("SELECT count(*) FROM frozen").get_int(0, 0), 500) << "A's frozen target";
  auto b_conn = pg::Connection::open(b, {.search_path = "public"});
  EXPECT_EQ(b_conn->exec("SELECT count(*) FROM frozen").get_int(0, 0), 500)
      << "paused once live, the target holds its rows";

  // Writes in B reach B's targets, chained ones included.
  b_conn->exec_script(
      "INSERT INTO posts SELECT g, 1 + g % 45, 'new ' || g, g % 5, 'published' "
      "FROM generate_series(301, 400) g; UPDATE posts SET likes = likes + 1 WHERE id % 4 = 0;"
      "DELETE FROM posts WHERE id % 10 = 0; UPDATE users SET name = name || '!' WHERE id <= 3");
  ASSERT_TRUE(tb->await_converged(tb->watermark_token(), 60s));
  for (const auto& [target, d] : b_defs)
    if (target != "public.frozen") {
      EXPECT_EQ(oracle_diff_at(b, target), "") << target << " differs from its definition in B";
    }

  // Dumped again, B gives the same statements in the same order.
  EXPECT_EQ(statements_only(tb->dump()), statements_only(script));

  // A second restore skips every definition and re-applies the pauses.
  auto second = trellis({"restore", file}, b);
  EXPECT_EQ(second.code, 0) << second.out << second.err;
  for (const auto& line : lines(second.out))
    EXPECT_TRUE(line.rfind("skipped ", 0) == 0 || line.rfind("pause ", 0) == 0) << line;
  EXPECT_EQ(lines(second.out).size(), out.size()) << second.out;
  EXPECT_EQ(definitions_by_target(*tb).size(), a_defs.size());
  tb->shutdown();
  std::remove(file.c_str());
}

TEST_F(DumpRestore, ARestoreOverAnotherDefinitionOfATargetStopsThereNamingIt) {
  sql(kTables);
  auto a = start(0, false);
  a->apply("RELATIONSHIP author FROM posts.author_id TO users.id");
  a->apply("TRANSFORM titles FROM posts SELECT title AS title");
  a->apply("TRANSFORM names FROM users SELECT name AS name");
  std::string file = write_file("trellis-dump-", a->dump());

  std::string b = database_with_tables();
  Options ob = options(0, false);
  ob.url = b;
  auto tb = Trellis::connect(ob);
  tb->apply("TRANSFORM titles FROM posts SELECT upper(title) AS title");
  auto r = trellis({"restore", file}, b);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "relationship public.posts.author: to_one\n");
  EXPECT_NE(r.err.find("error (conflict): statement 2 of 3 in " + file +
                       " (TRANSFORM \"public\".\"titles\" FROM"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("transform public.titles already exists with another definition"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(tb->status("names")) << "restore stops at the first error";

  // A relationship of the same name linking other columns is an error too.
  tb->apply("PAUSE TRANSFORM titles");
  tb->apply("DROP TRANSFORM titles");
  tb->apply("DROP RELATIONSHIP posts.author");
  tb->apply("RELATIONSHIP author FROM posts.id TO comments.post_id");
  r = trellis({"restore", file}, b);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("statement 1 of 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("relationship public.posts.author already exists and links "
                       "public.posts.id to public.comments.post_id"),
            std::string::npos)
      << r.err;
  std::remove(file.c_str());
}

TEST_F(DumpRestore, AScriptWithoutChainsAppliesThroughApplyWhateverTheTargetSchema) {
  sql(kTables);
  sql("CREATE SCHEMA reporting");
  auto a = start(0, false);
  a->apply("RELATIONSHIP author FROM posts.author_id TO users.id");
  a->apply("TRANSFORM reporting.titles FROM posts SELECT title AS title, author.name AS who");
  a->apply("TRANSFORM names FROM users SELECT name AS name");
  std::string script = a->dump();

  std::string b = database_with_tables();
  pg::Connection::open(b)->exec_script("CREATE SCHEMA reporting; CREATE SCHEMA elsewhere");
  Options ob = options(0, false);
  ob.url = b;
  ob.target_schema = "elsewhere";
  auto tb = Trellis::connect(ob);
  std::vector<std::string> applied;
  for (const auto& statement : lang::split_statements(script)) {
    auto r = tb->apply(statement);
    applied.push_back(r.kind + " " + r.target);
  }
  EXPECT_EQ(applied,
            (std::vector<std::string>{"relationship public.posts.author",
                                      "transform reporting.titles", "transform public.names"}));
  auto a_defs = definitions_by_target(*a);
  auto b_defs = definitions_by_target(*tb);
  ASSERT_EQ(b_defs.size(), 2u);
  for (const auto& [target, d] : a_defs) EXPECT_EQ(b_defs[target].statement, d.statement);
}

// The recipe the script's header prints: pg_dump leaving Trellis's objects
// out, pg_restore without the capture triggers, then `trellis restore`.
TEST_F(DumpRestore, ThePgDumpRecipeOfTheHeaderMovesAWholeDatabase) {
  auto a = define_everything();
  std::string script = a->dump();
  std::string file = write_file("trellis-dump-", script);
  std::string archive = temp_path("trellis-pgdump-");
  std::string list = temp_path("trellis-pglist-");
  std::string c = shared_cluster().create_database("dr");
  std::string recipe;
  for (const auto& line : lines(script)) {
    if (line.rfind("--   pg_", 0) != 0) continue;
    std::string step = line.substr(5);
    auto replace = [&](const std::string& what, const std::string& with) {
      for (size_t at = 0; (at = step.find(what, at)) != std::string::npos; at += with.size())
        step.replace(at, what.size(), with);
    };
    replace("app.dump", archive);
    replace("app.list", list);
    replace(" -d NEWDB", " -d '" + c + "'");
    if (step.size() > 3 && step.substr(step.size() - 3) == " DB") {
      step.resize(step.size() - 3);
      step += " '" + url_ + "'";
    }
    recipe += step + " && ";
  }
  ASSERT_NE(recipe, "") << script;
  std::string command = "PATH='" + testkit::server_bin_dir() + "':$PATH; " + recipe + "true";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;

  auto c_conn = pg::Connection::open(c, {.search_path = "public"});
  EXPECT_EQ(c_conn->exec("SELECT count(*) FROM posts").get_int(0, 0), 300) << "the data moved";
  EXPECT_EQ(c_conn
                ->exec("SELECT (SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal) + "
                       "(SELECT count(*) FROM pg_namespace WHERE nspname = 'trellis') + "
                       "(SELECT count(*) FROM pg_class WHERE relname LIKE 'likes_by_status%')")
                .get_int(0, 0),
            0)
      << "no capture trigger, catalog or target came along";

  auto r = trellis({"restore", file, "--wait", "--timeout", "150"}, c);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  Options oc = options();
  oc.url = c;
  auto tc = Trellis::connect(oc);
  c_conn->exec_script("UPDATE posts SET likes = likes + 3 WHERE id % 3 = 0");
  ASSERT_TRUE(tc->await_converged(tc->watermark_token(), 60s));
  for (const auto& d : tc->definitions())
    if (d.status != "paused") {
      EXPECT_EQ(oracle_diff_at(c, d.target), "") << d.target << " differs in the restored copy";
    }
  tc->shutdown();
  std::remove(file.c_str());
  std::remove(archive.c_str());
  std::remove(list.c_str());
}

}  // namespace
}  // namespace trellis::test
