// Runs every tests/sql/*.test scenario file as its own gtest case
// (Scenario.File/<file stem>), plus checks of the file format parser itself.
#include <algorithm>
#include <filesystem>
#include <map>

#include "support/harness.hpp"
#include "support/scenario_file.hpp"
#include "support/scenario_runner.hpp"

namespace trellis::test {

namespace {

std::vector<std::string> scenario_files() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(TRELLIS_SCENARIO_DIR, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".test")
      out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Test names from file names, made unique if two files sanitize alike.
std::string name_of(const ::testing::TestParamInfo<std::string>& info) {
  static std::map<std::string, std::string> names;
  auto it = names.find(info.param);
  if (it != names.end()) return it->second;
  std::string base = scenario::test_name(info.param);
  std::string name = base;
  for (int n = 2;
       std::any_of(names.begin(), names.end(), [&](const auto& kv) { return kv.second == name; });
       ++n)
    name = base + "_" + std::to_string(n);
  return names[info.param] = name;
}

}  // namespace

class Scenario : public TrellisTest,
                 public ::testing::WithParamInterface<std::string>,
                 public scenario::Host {
 public:
  std::string url() const override { return url_; }
  void sql(const std::string& statements) override { TrellisTest::sql(statements); }
  pg::Result query(const std::string& statement) override { return TrellisTest::query(statement); }
  std::string oracle_diff(const std::string& target) override {
    return TrellisTest::oracle_diff(target);
  }
  std::unique_ptr<Trellis> start(int drain_threads, bool staging) override {
    return TrellisTest::start(drain_threads, staging);
  }
};

TEST_P(Scenario, File) {
  scenario::File file;
  try {
    file = scenario::load(GetParam());
  } catch (const scenario::FormatError& e) {
    FAIL() << e.what();
  }
  scenario::Runner(*this, std::move(file)).run();
}

INSTANTIATE_TEST_SUITE_P(, Scenario, ::testing::ValuesIn(scenario_files()), name_of);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Scenario);

// The format parser needs no database.
TEST(ScenarioFormat, ParsesEveryRecordKindWithItsLine) {
  auto file = scenario::parse(
      "# covers the parser\n"
      "statement ok\n"
      "CREATE TABLE t (id int PRIMARY KEY);\n"
      "INSERT INTO t VALUES (1)\n"
      "\n"
      "statement error duplicate key\n"
      "INSERT INTO t VALUES (1)\n"
      "\n"
      "apply error not_found source table public.nope\n"
      "TRANSFORM x FROM nope SELECT 1 AS one\n"
      "\n"
      "apply ok\n"
      "TRANSFORM x FROM t\n"
      "  SELECT id + 1 AS next\n"
      "\n"
      "await live x y\n"
      "\n"
      "await\n"
      "\n"
      "await status x paused\n"
      "\n"
      "query sort\n"
      "SELECT id, next FROM x\n"
      "----\n"
      "1|2\n"
      "#3|NULL  \n"
      "\n"
      "oracle x\n"
      "\n"
      "restart workers\n"
      "\n"
      "workers off\n"
      "\n"
      "workers on\n"
      "\n"
      "concurrently 4 10\n"
      "INSERT INTO t VALUES (${conn} * 100 + ${iter})\n"
      "\n"
      "status x live\n",
      "f.test");
  using scenario::Kind;
  ASSERT_EQ(file.records.size(), 14u);
  const auto& r = file.records;
  EXPECT_EQ(r[0].kind, Kind::statement_ok);
  EXPECT_EQ(r[0].line, 2);
  EXPECT_EQ(r[0].body, "CREATE TABLE t (id int PRIMARY KEY);\nINSERT INTO t VALUES (1)");
  EXPECT_EQ(r[1].kind, Kind::statement_error);
  EXPECT_EQ(r[1].substring, "duplicate key");
  EXPECT_EQ(r[2].kind, Kind::apply_error);
  EXPECT_EQ(r[2].error_code, "not_found");
  EXPECT_EQ(r[2].substring, "source table public.nope");
  EXPECT_EQ(r[3].body, "TRANSFORM x FROM t\n  SELECT id + 1 AS next");
  EXPECT_EQ(r[4].kind, Kind::await_live);
  EXPECT_EQ(r[4].targets, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(r[5].kind, Kind::await_converged);
  EXPECT_EQ(r[6].kind, Kind::await_status);
  EXPECT_EQ(r[6].word, "paused");
  EXPECT_EQ(r[7].kind, Kind::query);
  EXPECT_TRUE(r[7].sort);
  EXPECT_EQ(r[7].expected, (std::vector<std::string>{"1|2", "#3|NULL"}));
  EXPECT_EQ(r[8].kind, Kind::oracle);
  EXPECT_EQ(r[9].kind, Kind::restart_workers);
  EXPECT_EQ(r[10].kind, Kind::workers_off);
  EXPECT_EQ(r[11].kind, Kind::workers_on);
  EXPECT_EQ(r[12].connections, 4);
  EXPECT_EQ(r[12].repeats, 10);
  EXPECT_EQ(r[13].kind, Kind::status);
  EXPECT_EQ(r[13].line, 39);
}

TEST(ScenarioFormat, RefusesMalformedRecordsNamingFileAndLine) {
  auto message = [](const char* text) {
    try {
      scenario::parse(text, "bad.test");
    } catch (const scenario::FormatError& e) {
      return std::string(e.what());
    }
    return std::string("(parsed)");
  };
  EXPECT_EQ(message("\n\nfrobnicate\n"), "bad.test:3: unknown record 'frobnicate'");
  EXPECT_EQ(message("query\nSELECT 1\n"),
            "bad.test:1: query needs a '----' line before its expected rows");
  EXPECT_EQ(message("apply error nope\nTRANSFORM x FROM t SELECT 1 AS a\n"),
            "bad.test:1: unknown error code 'nope'");
  EXPECT_EQ(message("await\nSELECT 1\n"),
            "bad.test:2: this record takes no body; separate records with a blank line");
  EXPECT_EQ(message("statement ok\n"), "bad.test:1: statement needs a body on the next lines");
  EXPECT_EQ(message("concurrently 0 3\nSELECT 1\n"),
            "bad.test:1: connections must be a positive number, got '0'");
}

TEST(ScenarioFormat, TestNamesAreSanitizedFileStems) {
  EXPECT_EQ(scenario::test_name("/a/b/key-change.v2.test"), "key_change_v2");
  EXPECT_EQ(scenario::test_name("plain_name.test"), "plain_name");
}

}  // namespace trellis::test
