// Integration tests of the `trellis` command: runs the built binary as a child process.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/cli_process.hpp"
#include "support/harness.hpp"
#include "support/http_get.hpp"

extern char** environ;

namespace trellis::test {
namespace {

// The lines of a --log-json log that carry `event`; every line must be a
// JSON object with its time, instance and sentence.
std::vector<nlohmann::json> logged_events(const std::string& log, const std::string& event) {
  std::vector<nlohmann::json> out;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not a JSON line: " << line;
    if (j.is_discarded()) continue;
    EXPECT_TRUE(j.contains("instance") && j.contains("ts") && j.contains("msg")) << line;
    if (j.value("event", "") == event) out.push_back(j);
  }
  return out;
}

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class Cli : public TrellisTest {
 protected:
  // Runs trellis with `-d url_` appended; fails the test when it does not
  // finish within `timeout`.
  Outcome trellis(std::vector<std::string> args, std::chrono::seconds timeout = 60s) {
    return run_trellis(std::move(args), url_, timeout);
  }

  std::unique_ptr<CliProcess> start_run(std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"run", "-d", url_};
    args.insert(args.end(), extra.begin(), extra.end());
    auto p = std::make_unique<CliProcess>(args);
    // The start line is logged once the workers run.
    bool started = eventually(
        [&] { return p->err().find("running:") != std::string::npos || p->wait(0ms); }, 60s);
    EXPECT_TRUE(started) << "trellis run did not log its start line; stderr: " << p->err();
    return p;
  }

  // Sends SIGTERM and expects a clean exit 0 promptly.
  void stop_run(CliProcess& p) {
    p.signal(SIGTERM);
    auto code = p.wait(10s);
    ASSERT_TRUE(code.has_value()) << "trellis run did not stop within 10 s of SIGTERM";
    EXPECT_EQ(*code, 0) << p.err();
    EXPECT_NE(p.err().find("received SIGTERM"), std::string::npos) << p.err();
    EXPECT_NE(p.err().find("stopped cleanly"), std::string::npos) << p.err();
  }

  // The attempts of public.doubled's drain failure (0 when there is none).
  int t_status_attempts() {
    auto j = nlohmann::json::parse(trellis({"status", "doubled", "--json"}).out);
    return j["drain_failure"].is_null() ? 0 : j["drain_failure"]["attempts"].get<int>();
  }

  std::string status_word(const std::string& target) {
    auto r = trellis({"status", target, "--json"});
    if (r.code != 0) return "(exit " + std::to_string(r.code) + ": " + r.err + ")";
    return nlohmann::json::parse(r.out).at("status").get<std::string>();
  }

  void await_live(const std::string& target) {
    std::string last;
    bool live = eventually(
        [&] {
          last = status_word(target);
          return last == "live";
        },
        60s);
    ASSERT_TRUE(live) << target << " did not reach live; last status " << last;
  }

  void create_orders(int rows) {
    sql("CREATE TABLE orders (id int PRIMARY KEY, amount numeric(12,2), status text);"
        "INSERT INTO orders SELECT g, g * 1.5, (ARRAY['new','paid','cancelled'])[1 + g % 3] "
        "FROM generate_series(1, " +
        std::to_string(rows) + ") g");
  }

  static constexpr const char* kDoubled =
      "TRANSFORM doubled FROM orders SELECT amount * 2 AS twice, upper(status) AS label WHERE "
      "status <> 'cancelled'";
};

TEST_F(Cli, ApplyRegistersTheTransformAndStatusJsonShowsIt) {
  create_orders(10);
  auto r = trellis({"apply", kDoubled});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "transform public.doubled: waiting_to_backfill\n");
  EXPECT_EQ(query("SELECT count(*) FROM doubled").get_int(0, 0), 0) << "apply must not build";

  auto one = trellis({"status", "doubled", "--json"});
  ASSERT_EQ(one.code, 0) << one.err;
  auto j = nlohmann::json::parse(one.out);
  ASSERT_TRUE(j.is_object()) << one.out;
  EXPECT_EQ(j["target"], "public.doubled");
  EXPECT_EQ(j["status"], "waiting_to_backfill");

  auto all = trellis({"status", "--json"});
  ASSERT_EQ(all.code, 0) << all.err;
  auto arr = nlohmann::json::parse(all.out);
  ASSERT_TRUE(arr.is_array()) << all.out;
  ASSERT_EQ(arr.size(), 1u);
  EXPECT_EQ(arr[0]["target"], "public.doubled");
}

TEST_F(Cli, ApplyPrintsTheNoteOfAnAdoptionUnderItsLine) {
  create_orders(10);
  sql("CREATE TABLE doubled (id int PRIMARY KEY, twice numeric, label text, memo text)");
  auto r = trellis(
      {"apply", std::string(kDoubled).replace(0, 17, "TRANSFORM doubled ADOPT EXISTING TABLE")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "transform public.doubled: waiting_to_backfill\n"
            "  adopted table public.doubled; kept beside what the transform writes: column "
            "\"memo\"\n");
}

TEST_F(Cli, ApplyOfBadTextExitsOneWithAParseError) {
  create_orders(10);
  auto r = trellis({"apply", "TRANSFORM doubled FROM orders SELEKT amount AS a"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("error (parse): ", 0), 0u) << r.err;
  EXPECT_EQ(r.out, "");
  auto all = trellis({"status", "--json"});
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_EQ(nlohmann::json::parse(all.out), nlohmann::json::array()) << "nothing was registered";
}

TEST_F(Cli, ApplyFileAppliesEachStatementAndReadsTheUrlFromTheEnvironment) {
  create_orders(10);
  sql("CREATE TABLE customers (id int PRIMARY KEY, name text)");
  std::string file = temp_path("trellis-cli-stmts-");
  std::ofstream(file) << "-- two transforms; the ';' inside the literal is not a separator\n"
                      << kDoubled << ";\n\n"
                      << "TRANSFORM names FROM customers SELECT name || ';' AS tagged;\n";
  CliProcess p({"apply", "-f", file}, {"TRELLIS_DATABASE_URL=" + url_});
  auto code = p.wait(60s);
  unlink(file.c_str());
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << p.err();
  EXPECT_EQ(p.out(),
            "transform public.doubled: waiting_to_backfill\n"
            "transform public.names: waiting_to_backfill\n");
  auto all = nlohmann::json::parse(trellis({"status", "--json"}).out);
  ASSERT_EQ(all.size(), 2u);
  std::set<std::string> targets{all[0]["target"], all[1]["target"]};
  EXPECT_EQ(targets, (std::set<std::string>{"public.doubled", "public.names"}));
}

TEST_F(Cli, ApplyFileStopsAtTheFirstFailingStatementAndNamesIt) {
  create_orders(10);
  std::string file = temp_path("trellis-cli-stmts-");
  std::ofstream(file) << kDoubled << "; TRANSFORM broken FROM no_such_table SELECT 1 AS one";
  auto r = trellis({"apply", "-f", file});
  unlink(file.c_str());
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "transform public.doubled: waiting_to_backfill\n");
  EXPECT_NE(r.err.find("statement 2 of 2"), std::string::npos) << r.err;
}

// The SPEC's record, plus the transform's own paused columns, the upstreams
// it waits for and its build's progress (what the text status says, the
// JSON says too).
TEST_F(Cli, StatusJsonUsesExactlyTheSpecFieldNamesAndItsOwnPausedColumns) {
  create_orders(10);
  ASSERT_EQ(trellis({"apply", kDoubled}).code, 0);
  auto r = trellis({"status", "public.doubled", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::set<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.insert(it.key());
  EXPECT_EQ(keys, (std::set<std::string>{
                      "target", "status", "backfill_failure", "capture_wait", "capture_failure",
                      "held_keys", "drain_failure", "source_index_gaps", "correcting",
                      "paused_upstream_columns", "paused_columns", "upstream_waits",
                      "build_rows_done", "build_rows_estimate"}));
  // Nothing holds a fresh transform up: null objects and empty lists.
  for (const char* k :
       {"backfill_failure", "capture_wait", "capture_failure", "held_keys", "drain_failure"})
    EXPECT_TRUE(j[k].is_null()) << k << " = " << j[k].dump();
  for (const char* k : {"source_index_gaps", "correcting", "paused_upstream_columns",
                        "paused_columns", "upstream_waits"})
    EXPECT_EQ(j[k], nlohmann::json::array()) << k;
  EXPECT_TRUE(j["build_rows_done"].is_number_integer()) << r.out;
}

TEST_F(Cli, StatusShowsAPausedColumnWithItsCauseInTextAndJson) {
  create_orders(10);
  ASSERT_EQ(trellis({"apply", kDoubled}).code, 0);
  ASSERT_EQ(trellis({"apply", "PAUSE TRANSFORM doubled.label"}).code, 0);
  auto r = trellis({"status", "doubled", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto paused = nlohmann::json::parse(r.out).at("paused_columns");
  ASSERT_EQ(paused.size(), 1u) << r.out;
  EXPECT_EQ(paused[0]["column"], "label");
  EXPECT_EQ(paused[0]["cause"], "operator");
  EXPECT_TRUE(paused[0]["since"].is_string()) << r.out;
  EXPECT_TRUE(paused[0]["error"].is_null()) << r.out;
  auto text = trellis({"status", "doubled"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("column label is paused by PAUSE TRANSFORM since "), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("RESUME TRANSFORM public.doubled.label rebuilds it"), std::string::npos)
      << text.out;
  ASSERT_EQ(trellis({"apply", "RESUME TRANSFORM doubled.label"}).code, 0);
  EXPECT_EQ(nlohmann::json::parse(trellis({"status", "doubled", "--json"}).out)["paused_columns"],
            nlohmann::json::array());
}

TEST_F(Cli, StatusOfAnUnknownTargetIsNotFound) {
  auto r = trellis({"status", "unknown_target"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("error (not_found): ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("unknown_target"), std::string::npos) << r.err;
  EXPECT_EQ(trellis({"status", "unknown_target", "--json"}).code, 1);
}

TEST_F(Cli, StatusTableSaysNothingWillMoveWithoutWorkers) {
  create_orders(10);
  ASSERT_EQ(trellis({"apply", kDoubled}).code, 0);
  auto r = trellis({"status"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("TARGET"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("public.doubled  waiting_to_backfill"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("staging worker not running, drain workers not running"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("nothing will move: start `trellis run`"), std::string::npos) << r.out;
}

TEST_F(Cli, StatusTableListsRelationships) {
  create_orders(10);
  sql("CREATE TABLE customers (id int PRIMARY KEY, name text)");
  auto applied = trellis({"apply", "RELATIONSHIP customer FROM orders.id TO customers.id"});
  ASSERT_EQ(applied.code, 0) << applied.err;
  EXPECT_NE(applied.out.find("relationship public.orders.customer: to_one"), std::string::npos)
      << applied.out;
  auto r = trellis({"status"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\nRELATIONSHIP  FROM              TO                   CARDINALITY\n"
                       "customer      public.orders.id  public.customers.id  to-one\n\nworkers:"),
            std::string::npos)
      << r.out;
}

TEST_F(Cli, StatusTableNamesTheUpstreamAResumedReaderWaitsFor) {
  create_orders(10);
  {
    auto t = start(2);
    t->apply(kDoubled);
    await_status(*t, "doubled", "live");
    t->apply("TRANSFORM labels FROM doubled SELECT lower(label) AS l");
    await_status(*t, "labels", "live");
    t->apply("PAUSE TRANSFORM doubled");
    t->apply("PAUSE TRANSFORM labels");
  }  // no workers from here on
  auto resumed = trellis({"apply", "RESUME TRANSFORM labels"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(resumed.out, "resume public.labels: waiting_to_backfill\n");
  auto r = trellis({"status", "labels"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("waits for upstream transform public.doubled, which is paused; RESUME "
                       "TRANSFORM public.doubled; this one builds once that is live"),
            std::string::npos)
      << r.out;
  ASSERT_EQ(trellis({"apply", "RESUME TRANSFORM doubled"}).code, 0);
  r = trellis({"status", "labels"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("waits for upstream transform public.doubled, which is "
                       "waiting_to_backfill; its build starts by itself once that is live"),
            std::string::npos)
      << r.out;
}

TEST_F(Cli, RunAndAwaitBringATransformLiveAndTheTargetMatches) {
  create_orders(300);
  ASSERT_EQ(trellis({"apply", kDoubled}).code, 0);
  auto run = start_run({"--drain-threads", "2"});
  await_live("doubled");
  expect_oracle("doubled");

  auto table = trellis({"status"});
  EXPECT_NE(table.out.find("staging worker live, drain workers live"), std::string::npos)
      << table.out;
  EXPECT_EQ(table.out.find("nothing will move"), std::string::npos) << table.out;

  sql("INSERT INTO orders VALUES (1001, 5, 'new'); UPDATE orders SET amount = 0 WHERE id <= 20;"
      "UPDATE orders SET status = 'cancelled' WHERE id BETWEEN 21 AND 40;"
      "DELETE FROM orders WHERE id BETWEEN 41 AND 60");
  auto awaited = trellis({"await", "--timeout", "60"});
  EXPECT_EQ(awaited.code, 0) << awaited.err;
  EXPECT_EQ(awaited.out, "converged\n");
  expect_oracle("doubled");
  EXPECT_EQ(query("SELECT count(*) FROM doubled").get_int(0, 0),
            query("SELECT count(*) FROM orders WHERE status <> 'cancelled'").get_int(0, 0));
  stop_run(*run);
}

// `trellis await TARGET` waits for the build too: without a worker it times
// out (exit 2) naming the status; with one it prints the target live, then
// converged, and the target matches.
TEST_F(Cli, AwaitNamingATargetWaitsUntilItIsBuilt) {
  create_orders(3000);
  ASSERT_EQ(trellis({"apply", kDoubled}).code, 0);
  auto idle = trellis({"await", "doubled", "--timeout", "0.3"});
  EXPECT_EQ(idle.code, 2) << idle.out << idle.err;
  EXPECT_NE(idle.err.find("public.doubled is not live after 0."), std::string::npos) << idle.err;
  EXPECT_NE(idle.err.find(" s: it is waiting_to_backfill"), std::string::npos) << idle.err;
  auto run = start_run({"--drain-threads", "2"});
  auto awaited = trellis({"await", "doubled", "--timeout", "60"});
  EXPECT_EQ(awaited.code, 0) << awaited.err;
  EXPECT_EQ(awaited.out, "public.doubled: live\nconverged\n");
  expect_oracle("doubled");
  auto unknown = trellis({"await", "nowhere", "--timeout", "5"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("no transform has target nowhere"), std::string::npos) << unknown.err;
  stop_run(*run);
}

// With no worker running, a captured write cannot reach its target, so await
// must time out (exit 2); once `trellis run` is back, it converges.
TEST_F(Cli, TestResetReportsWhatItRepairedAsJson) {
  create_orders(100);
  ASSERT_EQ(trellis({"apply", kDoubled}).code, 0);
  auto refused = trellis({"test-reset", "--timeout", "5"});  // no workers yet
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.err.find("error (validation): test_reset needs a running staging worker"),
            std::string::npos)
      << refused.err;
  auto run = start_run({"--drain-threads", "2"});
  await_live("doubled");
  sql("BEGIN; ALTER TABLE orders DISABLE TRIGGER USER; UPDATE orders SET amount = amount + 1; "
      "ALTER TABLE orders ENABLE TRIGGER USER; COMMIT");
  auto r = trellis({"test-reset", "--json", "--timeout", "60"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // ENABLE TRIGGER USER enables them for origin sessions only, not ALWAYS:
  // found as a disruption, resumed with capture reinstalled.
  EXPECT_EQ(j["disrupted"], nlohmann::json::array({"public.doubled"})) << r.out;
  EXPECT_EQ(j["resumed"], nlohmann::json::array({"public.doubled"})) << r.out;
  EXPECT_EQ(j["rebuilt"], nlohmann::json::array()) << r.out;
  EXPECT_TRUE(j["seconds"].is_number()) << r.out;
  expect_oracle("doubled");
  stop_run(*run);
}

// self-check: refused without a worker; then a clean target (exit 0, a
// line), a tampered cell (exit 3, the table and the repair hint; the same
// as JSON).
TEST_F(Cli, SelfCheckPrintsTheOutcomeAndEachDivergenceAndExitsByIt) {
  create_orders(100);
  ASSERT_EQ(trellis({"apply", kDoubled}).code, 0);
  auto refused = trellis({"self-check", "doubled"});
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.err.find("no worker with drain threads is running"), std::string::npos)
      << refused.err;
  auto run = start_run({"--drain-threads", "2"});
  await_live("doubled");
  int64_t rows = query("SELECT count(*) FROM doubled").get_int(0, 0);  // WHERE keeps some
  auto clean = trellis({"self-check", "doubled"});
  EXPECT_EQ(clean.code, 0) << clean.err;
  EXPECT_EQ(clean.out, fmt::format("public.doubled: converged ({} rows compared)\n", rows));

  sql("UPDATE doubled SET twice = 0 WHERE id = 7");
  auto bad = trellis({"self-check", "doubled", "--strict"});
  EXPECT_EQ(bad.code, 3) << bad.err;
  EXPECT_NE(bad.out.find(fmt::format("public.doubled: diverged ({} rows compared)", rows)),
            std::string::npos)
      << bad.out;
  EXPECT_NE(bad.out.find("cell  {\"id\":7}  twice   0"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("PAUSE TRANSFORM then RESUME TRANSFORM rebuilds"), std::string::npos);
  auto json = trellis({"self-check", "doubled", "--json"});
  EXPECT_EQ(json.code, 3) << json.err;
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["outcome"], "diverged");
  EXPECT_EQ(j["state"], "done");
  EXPECT_EQ(j["mode"], "standard");
  EXPECT_EQ(j["rows_compared"], rows);
  ASSERT_EQ(j["divergences"].size(), 1u) << json.out;
  EXPECT_EQ(j["divergences"][0]["kind"], "cell");
  EXPECT_EQ(j["divergences"][0]["key"], nlohmann::json({{"id", 7}}));
  EXPECT_EQ(j["divergences"][0]["column"], "twice");
  EXPECT_EQ(j["divergences"][0]["persisted"], "0");
  stop_run(*run);
}

// With --log-json every state change is one JSON line with its event, target
// and instance: here capture installed, live, paused by a disruption (with its
// cause), resumed, live again, a drain failure (once, however often it is
// retried) and its clearing.
TEST_F(Cli, LogJsonWritesOneLinePerStateChangeWithItsTarget) {
  create_orders(50);
  ASSERT_EQ(trellis({"apply", kDoubled}).code, 0);
  auto run = start_run({"--drain-threads", "2", "--log-json"});
  await_live("doubled");
  sql("ALTER TABLE orders DISABLE TRIGGER USER");
  ASSERT_TRUE(eventually([&] { return status_word("doubled") == "paused"; }, 60s));
  sql("ALTER TABLE orders ENABLE TRIGGER USER");
  auto resumed = trellis({"apply", "--log-json", "RESUME TRANSFORM doubled"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  auto resumed_line = nlohmann::json::parse(resumed.err, nullptr, false);  // the one line it logs
  ASSERT_FALSE(resumed_line.is_discarded()) << resumed.err;
  EXPECT_EQ(resumed_line["event"], "resumed");
  EXPECT_EQ(resumed_line["target"], "public.doubled");
  EXPECT_EQ(resumed_line["details"]["from"], "paused");
  await_live("doubled");
  auto seen = [&](const std::string& event) { return logged_events(run->err(), event); };
  auto await_event = [&](const std::string& event, size_t count) {
    return eventually([&] { return seen(event).size() >= count; }, 30s);
  };
  ASSERT_TRUE(await_event("live", 2)) << run->err();
  ASSERT_GE(seen("capture_installed").size(), 2u) << run->err();
  EXPECT_EQ(seen("capture_installed")[0]["details"]["table"], "public.orders");
  for (const auto& e : seen("live")) EXPECT_EQ(e["target"], "public.doubled");
  auto paused = seen("paused");
  ASSERT_EQ(paused.size(), 1u) << run->err();
  EXPECT_EQ(paused[0]["target"], "public.doubled");
  EXPECT_EQ(paused[0]["details"]["kind"], "disruption");
  EXPECT_EQ(paused[0]["level"], "warning");

  // A target column renamed under the drain: its pages fail until renamed back.
  sql("ALTER TABLE doubled RENAME COLUMN twice TO twice_moved; UPDATE orders SET amount = amount "
      "+ 1 WHERE id = 1");
  ASSERT_TRUE(await_event("drain_failure", 1)) << run->err();
  ASSERT_TRUE(eventually([&] { return t_status_attempts() >= 2; }, 30s));
  sql("ALTER TABLE doubled RENAME COLUMN twice_moved TO twice");
  ASSERT_TRUE(await_event("drain_failure_cleared", 1)) << run->err();
  auto failed = seen("drain_failure");
  ASSERT_EQ(failed.size(), 1u) << "one line when it starts, not one per attempt: " << run->err();
  EXPECT_EQ(failed[0]["target"], "public.doubled");
  EXPECT_FALSE(failed[0]["details"]["sqlstate"].get<std::string>().empty());
  EXPECT_EQ(seen("drain_failure_cleared")[0]["target"], "public.doubled");
  stop_run(*run);
}

// Every edit of a transform is one JSON line too: defined, its build
// started once capture covers it, a column paused and resumed, the
// transform altered and its field build started, rebuilt in place by
// test-reset, paused and dropped.
TEST_F(Cli, LogJsonWritesOneLinePerEditOfATransform) {
  create_orders(50);
  // The one line a command logs, parsed.
  auto line_of = [&](const std::vector<std::string>& args) {
    auto r = trellis(args);
    EXPECT_EQ(r.code, 0) << r.err;
    auto j = nlohmann::json::parse(r.err, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not one JSON line: " << r.err;
    return j.is_discarded() ? nlohmann::json::object() : j;
  };
  auto defined = line_of({"apply", "--log-json", kDoubled});
  EXPECT_EQ(defined["event"], "defined");
  EXPECT_EQ(defined["target"], "public.doubled");
  EXPECT_EQ(defined["details"]["shape"], "one_to_one");
  EXPECT_EQ(defined["details"]["statement"].get<std::string>().rfind(
                "TRANSFORM \"public\".\"doubled\" FROM \"public\".\"orders\"", 0),
            0u)
      << defined;  // the statement as stored, names qualified

  auto run = start_run({"--drain-threads", "2", "--log-json"});
  await_live("doubled");
  auto seen = [&](const std::string& event) { return logged_events(run->err(), event); };
  ASSERT_TRUE(eventually([&] { return !seen("live").empty(); }, 30s)) << run->err();
  auto started = seen("build_started");
  ASSERT_EQ(started.size(), 1u) << run->err();
  EXPECT_EQ(started[0]["target"], "public.doubled");
  EXPECT_EQ(started[0]["details"]["table"], "public.orders");

  auto paused = line_of({"apply", "--log-json", "PAUSE TRANSFORM doubled.label"});
  EXPECT_EQ(paused["event"], "column_paused");
  EXPECT_EQ(paused["details"]["column"], "label");
  auto resumed = line_of({"apply", "--log-json", "RESUME TRANSFORM doubled.label"});
  EXPECT_EQ(resumed["event"], "column_resumed");
  EXPECT_EQ(resumed["details"]["column"], "label");
  await_live("doubled");

  auto altered =
      line_of({"apply", "--log-json", "ALTER TRANSFORM doubled ADD amount + 1 AS plus_one"});
  EXPECT_EQ(altered["event"], "altered");
  EXPECT_EQ(altered["target"], "public.doubled");
  EXPECT_EQ(altered["details"]["added"], nlohmann::json::array({"plus_one"}));
  ASSERT_TRUE(eventually([&] { return !seen("field_build_started").empty(); }, 30s)) << run->err();
  EXPECT_EQ(seen("field_build_started")[0]["target"], "public.doubled");
  await_live("doubled");

  auto reset = trellis({"test-reset", "--log-json"});
  ASSERT_EQ(reset.code, 0) << reset.err;
  auto rebuilding = logged_events(reset.err, "rebuilding");
  ASSERT_EQ(rebuilding.size(), 1u) << reset.err;
  EXPECT_EQ(rebuilding[0]["target"], "public.doubled");
  EXPECT_EQ(rebuilding[0]["details"]["cause"], "test_reset");

  ASSERT_EQ(trellis({"apply", "PAUSE TRANSFORM doubled"}).code, 0);
  auto dropped = line_of({"apply", "--log-json", "DROP TRANSFORM doubled"});
  EXPECT_EQ(dropped["event"], "dropped");
  EXPECT_EQ(dropped["target"], "public.doubled");
  stop_run(*run);
}

TEST_F(Cli, AwaitTimesOutWhileNoWorkerRunsThenConvergesOnceOneDoes) {
  create_orders(50);
  ASSERT_EQ(trellis({"apply", kDoubled}).code, 0);
  auto first = start_run();
  await_live("doubled");  // capture is installed on orders by now
  stop_run(*first);

  sql("INSERT INTO orders VALUES (5000, 1, 'new')");
  auto timed_out = trellis({"await", "--timeout", "0.5"});
  EXPECT_EQ(timed_out.code, 2) << timed_out.out << timed_out.err;
  EXPECT_NE(timed_out.err.find("timed out after 0.5 s"), std::string::npos) << timed_out.err;
  EXPECT_NE(timed_out.err.find("nothing will move"), std::string::npos) << timed_out.err;
  EXPECT_EQ(query("SELECT count(*) FROM doubled WHERE id = 5000").get_int(0, 0), 0);

  auto second = start_run();
  auto converged = trellis({"await", "--timeout", "60"});
  EXPECT_EQ(converged.code, 0) << converged.err;
  EXPECT_EQ(query("SELECT count(*) FROM doubled WHERE id = 5000").get_int(0, 0), 1);
  expect_oracle("doubled");
  stop_run(*second);
}

// A session holding a lock on the source keeps capture from being installed:
// status names the table and the blocking pid, and the transform goes live
// once the lock is released.
TEST_F(Cli, StatusExplainsACaptureWaitWithTheBlockingPid) {
  create_orders(20);
  ASSERT_EQ(trellis({"apply", kDoubled}).code, 0);
  int blocker = app_->backend_pid();
  sql("BEGIN; LOCK TABLE orders IN ACCESS EXCLUSIVE MODE");
  auto run = start_run();
  nlohmann::json wait;
  bool waiting = eventually(
      [&] {
        auto r = trellis({"status", "doubled", "--json"});
        if (r.code == 0) wait = nlohmann::json::parse(r.out)["capture_wait"];
        return !wait.is_null();
      },
      30s);
  ASSERT_TRUE(waiting) << "capture_wait never reported";
  EXPECT_EQ(wait["table"], "public.orders");
  EXPECT_EQ(wait["blocking_pids"], nlohmann::json::array({blocker}));
  auto table = trellis({"status"});
  EXPECT_NE(table.out.find(fmt::format("on public.orders held by pids {}", blocker)),
            std::string::npos)
      << table.out;
  sql("COMMIT");
  await_live("doubled");
  auto after = nlohmann::json::parse(trellis({"status", "doubled", "--json"}).out);
  EXPECT_TRUE(after["capture_wait"].is_null()) << after.dump();
  stop_run(*run);
}

// A disruption (triggers disabled outside Trellis) is explained once: the
// stored error says what was lost and that a RESUME repairs it, and the
// table adds the statement to run, without a second piece of advice.
TEST_F(Cli, StatusNamesTheRepairOfADisruptionOnce) {
  create_orders(20);
  ASSERT_EQ(trellis({"apply", kDoubled}).code, 0);
  auto run = start_run();
  await_live("doubled");
  sql("ALTER TABLE orders DISABLE TRIGGER ALL; ALTER TABLE orders ENABLE TRIGGER ALL");
  std::string out;
  bool paused = eventually(
      [&] {
        out = trellis({"status", "doubled"}).out;
        return out.find("changed outside Trellis") != std::string::npos;
      },
      30s);
  ASSERT_TRUE(paused) << out;
  EXPECT_NE(out.find("to repair: RESUME TRANSFORM public.doubled"), std::string::npos) << out;
  EXPECT_EQ(out.find("reinstalls capture and rebuilds"), std::string::npos) << out;
  stop_run(*run);
}

TEST_F(Cli, StatusWatchRedrawsUntilInterrupted) {
  create_orders(5);
  ASSERT_EQ(trellis({"apply", kDoubled}).code, 0);
  CliProcess watch({"status", "--watch", "--json", "-d", url_});
  auto lines = [&] {
    auto out = watch.out();
    return std::count(out.begin(), out.end(), '\n');
  };
  ASSERT_TRUE(eventually([&] { return lines() >= 2 || watch.wait(0ms); }, 20s)) << watch.err();
  watch.signal(SIGINT);
  EXPECT_EQ(watch.wait(10s), 0) << watch.err();
  auto out = watch.out();
  auto first = nlohmann::json::parse(out.substr(0, out.find('\n')));
  ASSERT_TRUE(first.is_array());
  EXPECT_EQ(first[0]["target"], "public.doubled");

  // As text, each screen ends with the ring's backlog (nothing is ready to
  // drain without a staging worker: 0 keys).
  CliProcess text({"status", "--watch", "-d", url_});
  auto screens = [&] {
    auto out = text.out();
    size_t n = 0;
    for (auto at = out.find("ring backlog: 0 keys"); at != std::string::npos;
         at = out.find("ring backlog: 0 keys", at + 1))
      ++n;
    return n;
  };
  ASSERT_TRUE(eventually([&] { return screens() >= 2 || text.wait(0ms); }, 20s)) << text.err();
  text.signal(SIGINT);
  EXPECT_EQ(text.wait(10s), 0) << text.err();
}

TEST_F(Cli, ASecondStagingWorkerIsRefused) {
  auto first = start_run();
  auto second = trellis({"run"}, 30s);
  EXPECT_EQ(second.code, 1);
  EXPECT_NE(second.err.find("error (conflict): "), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("--no-staging"), std::string::npos) << "names the fix: " << second.err;
  auto drains_only = start_run({"--no-staging", "--drain-threads", "1"});
  stop_run(*drains_only);
  stop_run(*first);
}

// trellis run --metrics serves Prometheus text over HTTP, says where, and
// stops serving when it stops.
TEST_F(Cli, RunServesMetricsOverHttp) {
  create_orders(20);
  ASSERT_EQ(trellis({"apply", kDoubled}).code, 0);
  auto run = start_run({"--metrics", "127.0.0.1:0", "--drain-threads", "2"});
  await_live("doubled");
  int port = 0;
  ASSERT_TRUE(eventually(
      [&] {
        auto err = run->err();
        auto at = err.find("serving Prometheus metrics at http://127.0.0.1:");
        if (at == std::string::npos) return false;
        port = std::stoi(err.substr(at + 47));
        return true;
      },
      10s))
      << run->err();
  auto r = http_get("127.0.0.1", port, "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(
      sample(r.body, "trellis_transform_status", {"target=\"public.doubled\"", "status=\"live\""}),
      1)
      << r.body;
  EXPECT_EQ(sample(r.body, "trellis_workers", {"kind=\"drain\""}), 2) << r.body;
  stop_run(*run);
  EXPECT_EQ(http_get("127.0.0.1", port, "/metrics").status, 0);
}

TEST_F(Cli, DevServesAKeptClusterUntilStopped) {
  std::string dir = fs::temp_directory_path() / "trellis-cli-dev-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  CliProcess dev({"dev", "--dir", dir});
  std::string url;
  bool ready = eventually(
      [&] {
        auto out = dev.out();
        auto at = out.find("export TRELLIS_DATABASE_URL='");
        auto end = at == std::string::npos ? at : out.find("'\n", at + 29);
        if (end != std::string::npos) url = out.substr(at + 29, end - at - 29);
        return !url.empty() || dev.wait(0ms);
      },
      90s);
  ASSERT_TRUE(ready && !url.empty()) << dev.out() << dev.err();
  CliProcess status({"status", "--json", "-d", url});
  ASSERT_EQ(status.wait(60s), 0) << status.err();
  EXPECT_EQ(status.out(), "[]\n");
  dev.signal(SIGTERM);
  EXPECT_EQ(dev.wait(60s), 0) << dev.err();
  EXPECT_TRUE(fs::exists(fs::path(dir) / "data" / "PG_VERSION")) << "the data dir is kept";
  EXPECT_FALSE(fs::exists(fs::path(dir) / "data" / "postmaster.pid")) << "the server is stopped";
  fs::remove_all(dir);
}

TEST_F(Cli, DemoEndsWithEveryTargetMatchingItsDefinition) {
  CliProcess demo({"demo"});
  auto code = demo.wait(120s);
  ASSERT_TRUE(code.has_value()) << "demo still running after 120 s:\n" << demo.out();
  EXPECT_EQ(*code, 0) << demo.out() << demo.err();
  auto out = demo.out();
  for (const char* target :
       {"public.order_view", "public.customer_view", "public.customer_totals",
        "public.order_customers", "public.revenue_by_country", "public.big_orders"})
    EXPECT_NE(out.find(target), std::string::npos) << out;
  size_t yes = 0;
  for (auto at = out.find("matches its definition: yes"); at != std::string::npos;
       at = out.find("matches its definition: yes", at + 1))
    ++yes;
  EXPECT_EQ(yes, 6u) << out;
}

}  // namespace
}  // namespace trellis::test

namespace trellis::test {

TEST_F(Cli, QuarantineListAndRelease) {
  sql("CREATE TABLE src (id int PRIMARY KEY, d int); INSERT INTO src VALUES (1, 1), (2, 0)");
  auto t = start(1);
  t->apply("TRANSFORM inv FROM src SELECT 10 / d AS q");
  await_status(*t, "inv", "live");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!t->status("inv")->held_keys && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto list = trellis({"quarantine", "list", "inv"});
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find("public.src"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("[\"2\"]"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("division by zero (22012)"), std::string::npos) << list.out;
  auto still = trellis({"quarantine", "release", "inv", "src", "[\"2\"]"});
  EXPECT_EQ(still.code, 1);
  EXPECT_EQ(still.err.rfind("error (conflict): ", 0), 0u) << still.err;
  sql("UPDATE src SET d = 5 WHERE id = 2");
  auto release = trellis({"quarantine", "release", "inv", "src", "[\"2\"]"});
  EXPECT_EQ(release.code, 0) << release.err;
  auto empty = trellis({"quarantine", "list", "inv"});
  EXPECT_EQ(empty.out, "no keys are held for inv\n");
  await_converged(*t);
  expect_oracle("inv");
}

}  // namespace trellis::test
