// GROUP BY transforms under load and failure: many writers on few hot
// groups, a build started mid-stream, a worker process killed mid-page, the
// source index gap report, chaining in all three directions, and a target
// of an earlier version's group encoding.
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "catalog/definition.hpp"
#include "compile/transform_sql.hpp"
#include "support/harness.hpp"

namespace trellis::test {

namespace {

void write_hot_groups(const std::string& url, int seed, int ops) {
  auto conn = pg::Connection::open(url, {.search_path = "public"});
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> key(1, 40), grp(0, 2), kind(0, 5), val(-20, 20);
  for (int i = 0; i < ops; ++i) {
    std::string k = std::to_string(key(rng)), g = std::to_string(grp(rng));
    std::string v = std::to_string(val(rng));
    std::string stmt;
    switch (kind(rng)) {
      case 0:
      case 1:
        stmt = "INSERT INTO sales VALUES (" + k + ", " + g + ", " + v +
               ") ON CONFLICT (id) DO "
               "UPDATE SET amount = EXCLUDED.amount";
        break;
      case 2:
        stmt = "UPDATE sales SET grp = " + g + " WHERE id = " + k;
        break;
      case 3:
        stmt = "UPDATE sales SET amount = amount + " + v + " WHERE id = " + k;
        break;
      case 4:
        stmt = "UPDATE sales SET grp = NULL WHERE id = " + k;
        break;
      default:
        stmt = "DELETE FROM sales WHERE id = " + k;
    }
    conn->exec_script(stmt);
  }
}

void run_writers(const std::string& url, int writers, int ops) {
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) threads.emplace_back(write_hot_groups, url, 7 + w, ops);
  for (auto& t : threads) t.join();
}

}  // namespace

class Aggregate : public TrellisTest {
 protected:
  void create_sales(int extra_rows = 0) {
    sql("CREATE TABLE sales (id int PRIMARY KEY, grp int, amount int);"
        "CREATE INDEX ON sales (grp);"
        "INSERT INTO sales SELECT g, g % 3, g FROM generate_series(1, 40) g;"
        "INSERT INTO sales SELECT g, g % 3, g % 50 FROM generate_series(1000, " +
        std::to_string(999 + extra_rows) + ") g");
  }
  const char* kDefine =
      "TRANSFORM by_grp FROM sales GROUP BY grp SELECT COUNT(*) AS n, SUM(amount) AS total, "
      "MIN(amount) AS lo, MAX(amount) AS hi, STRING_AGG(id::text, ',' ORDER BY id) AS ids";
  // Defines `define` (a target by_grp over sales) as an earlier version stored it, with a text[]
  // group key, and checks it is built, maintained and rebuilt in place with that encoding.
  void expect_text_array_group_key_kept(const char* define);
};

TEST_F(Aggregate, FourWritersOnThreeHotGroupsConvergeToOracle) {
  create_sales();
  auto t = start(3);
  t->apply(kDefine);
  await_status(*t, "by_grp", "live");
  run_writers(url_, 4, 300);
  await_converged(*t);
  expect_oracle("by_grp");
}

TEST_F(Aggregate, BuildStartedMidStreamConvergesToOracle) {
  create_sales(20000);
  auto t = start(3);
  std::thread writers([&] { run_writers(url_, 3, 300); });
  t->apply(kDefine);
  writers.join();
  await_status(*t, "by_grp", "live");
  await_converged(*t);
  expect_oracle("by_grp");
}

TEST_F(Aggregate, MissingSourceIndexIsReportedAsAGap) {
  create_sales();
  auto t = start(1);
  t->apply(kDefine);
  await_status(*t, "by_grp", "live");
  EXPECT_TRUE(t->status("by_grp")->source_index_gaps.empty());
  sql("DROP INDEX sales_grp_idx");
  auto gaps = t->status("by_grp")->source_index_gaps;
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].role, "group_by");
  EXPECT_EQ(gaps[0].create_index, "CREATE INDEX ON \"public\".\"sales\" (\"grp\")");
  EXPECT_EQ(t->status("by_grp")->status, "live");  // a warning, never a hold-up
}

// A GROUP BY expression's source index is an expression index: its drop is
// a gap naming the expression and the CREATE INDEX that restores it, and
// while a session holds the source exclusively (the index keys cannot be
// read) status still answers at once.
TEST_F(Aggregate, AMissingExpressionIndexIsReportedAsAGap) {
  create_sales();
  sql("CREATE INDEX by_bucket_idx ON sales ((grp % 3), (amount > 0))");
  auto t = start(1);
  t->apply(
      "TRANSFORM by_bucket FROM sales GROUP BY grp % 3 AS bucket, amount > 0 AS positive "
      "SELECT COUNT(*) AS n");
  await_status(*t, "by_bucket", "live");
  EXPECT_TRUE(t->status("by_bucket")->source_index_gaps.empty());
  sql("DROP INDEX by_bucket_idx");
  auto gaps = t->status("by_bucket")->source_index_gaps;
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].role, "group_by");
  EXPECT_EQ(gaps[0].columns, (std::vector<std::string>{"(grp % 3)", "(amount > 0)"}));
  EXPECT_EQ(gaps[0].create_index, "CREATE INDEX ON \"public\".\"sales\" ((grp % 3), (amount > 0))");
  sql(gaps[0].create_index);
  EXPECT_TRUE(t->status("by_bucket")->source_index_gaps.empty());
  auto locker = pg::Connection::open(url_, {.search_path = "public"});
  locker->exec("BEGIN");
  locker->exec("LOCK TABLE sales IN ACCESS EXCLUSIVE MODE");
  auto during = t->status("by_bucket");
  ASSERT_TRUE(during);
  EXPECT_TRUE(during->source_index_gaps.empty());
  locker->exec("ROLLBACK");
  expect_oracle("by_bucket");
}

TEST_F(Aggregate, ChainsInAllThreeDirections) {
  create_sales();
  auto t = start(2);
  t->apply("TRANSFORM sales_v FROM sales SELECT grp AS g, amount * 2 AS doubled");
  await_status(*t, "sales_v", "live");
  sql("CREATE INDEX ON sales_v (g)");
  t->apply("TRANSFORM v_totals FROM sales_v GROUP BY g SELECT SUM(doubled) AS s");  // agg over 1-1
  await_status(*t, "v_totals", "live");
  t->apply(
      "TRANSFORM totals_view FROM v_totals SELECT g AS grp_copy, s + 1 AS s1");  // 1-1 over agg
  t->apply("TRANSFORM sizes FROM v_totals GROUP BY s WITHOUT SOURCE INDEX SELECT COUNT(*) AS n");
  await_status(*t, "totals_view", "live");
  await_status(*t, "sizes", "live");
  run_writers(url_, 2, 200);
  await_converged(*t);
  for (const char* target : {"sales_v", "v_totals", "totals_view", "sizes"}) expect_oracle(target);
}

// A GROUP BY target defined by an earlier version keeps its group key a
// text[] of each value's JSON text (the definition says so, or says
// nothing): it is built, maintained under writers and rebuilt in place
// with that encoding, and converges like a target of the text encoding.
void Aggregate::expect_text_array_group_key_kept(const char* define) {
  create_sales(500);
  start(0, /*staging=*/false)->apply(define);  // registered, not built
  auto stored = query("SELECT definition::text FROM trellis.transforms").get(0, 0);
  auto def = catalog::transform_from_json(nlohmann::json::parse(stored));
  EXPECT_TRUE(def.compare_group_text);
  def.compare_group_text = false;
  auto earlier = catalog::to_json(def);
  earlier.erase("group_key");
  sql("DROP TABLE by_grp__ledger, by_grp");
  for (const auto& ddl : compile::compile_transform(def).create) sql(ddl);
  sql("UPDATE trellis.transforms SET definition = $j$" + earlier.dump() + "$j$::jsonb");
  EXPECT_EQ(query("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
                  "'by_grp'::regclass AND attname = '__group'")
                .get(0, 0),
            "text[]");

  auto t = start(2);
  await_status(*t, "by_grp", "live");
  run_writers(url_, 2, 150);
  await_converged(*t);
  expect_oracle("by_grp");
  sql("UPDATE by_grp SET total = -1 WHERE grp = 1");  // repaired by the rebuild
  EXPECT_EQ(t->request_backfill("public.sales"), 1);
  await_status(*t, "by_grp", "live");
  await_converged(*t);
  expect_oracle("by_grp");
}

TEST_F(Aggregate, ATargetOfAnEarlierVersionKeepsItsTextArrayGroupKey) {
  expect_text_array_group_key_kept(kDefine);
}

// The same for fields that all come from running state, which a page folds
// with one upsert.
TEST_F(Aggregate, AStateOnlyTargetOfAnEarlierVersionKeepsItsTextArrayGroupKey) {
  expect_text_array_group_key_kept(
      "TRANSFORM by_grp FROM sales GROUP BY grp SELECT COUNT(*) AS n, SUM(amount) AS total, "
      "AVG(amount) AS mean");
}

}  // namespace trellis::test
