// Joins under concurrency: writers on the source and on every joined table
// at once (inserts, updates of read and join columns, key changes, deletes)
// while three drain threads run, during the build and after it; once writes
// stop, each target (1-1 and aggregate) must equal its definition. And a
// join's referencing index dropped later shows as a gap.
#include <random>
#include <thread>

#include "support/harness.hpp"

namespace trellis::test {

namespace {

// `ops` random single-statement transactions over the three tables.
void write_joined(const std::string& url, int seed, int ops) {
  auto conn = pg::Connection::open(url, {.search_path = "public"});
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> id(1, 30), kind(0, 11), val(-5, 5);
  for (int i = 0; i < ops; ++i) {
    std::string a = std::to_string(id(rng)), b = std::to_string(id(rng)),
                v = std::to_string(val(rng));
    std::string stmt;
    switch (kind(rng)) {
      case 0:
        stmt = "INSERT INTO j_orders VALUES (" + a + ", " + b + ", " + v +
               ") ON CONFLICT (id) DO UPDATE SET cust = EXCLUDED.cust";
        break;
      case 1:
        stmt = "UPDATE j_orders SET amount = amount + 1 WHERE id = " + a;
        break;
      case 2:
        stmt = "UPDATE j_orders SET cust = " + b + " WHERE id = " + a;
        break;
      case 3:
        stmt = "DELETE FROM j_orders WHERE id = " + a;
        break;
      case 4:
        stmt = "INSERT INTO j_cust VALUES (" + a + ", 'c" + v + "', " + b +
               ") ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name";
        break;
      case 5:
        stmt = "UPDATE j_cust SET name = name || 'x' WHERE id = " + a;
        break;
      case 6:
        stmt = "UPDATE j_cust SET region = " + b + " WHERE id = " + a;
        break;
      case 7:
        stmt = "DELETE FROM j_cust WHERE id = " + a;
        break;
      case 8:
        stmt = "UPDATE j_cust SET id = " + b + " WHERE id = " + a +
               " AND NOT EXISTS (SELECT 1 FROM j_cust WHERE id = " + b + ")";
        break;
      case 9:
        stmt = "INSERT INTO j_region VALUES (" + a + ", 'r" + v +
               "') ON CONFLICT (id) DO UPDATE SET label = EXCLUDED.label";
        break;
      case 10:
        stmt = "DELETE FROM j_region WHERE id = " + a;
        break;
      default:
        stmt = "UPDATE j_cust SET region = NULL WHERE id = " + a;
    }
    try {
      conn->exec_script(stmt);
    } catch (const std::exception&) {
      conn->exec_script("ROLLBACK");
    }
  }
}

void run_writers(const std::string& url, int writers, int ops) {
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) threads.emplace_back(write_joined, url, 300 + w, ops);
  for (auto& t : threads) t.join();
}

}  // namespace

class Join : public TrellisTest {
 protected:
  void create_tables() {
    sql("CREATE TABLE j_region (id int PRIMARY KEY, label text);"
        "CREATE TABLE j_cust (id int PRIMARY KEY, name text, region int);"
        "CREATE INDEX ON j_cust (region);"
        "CREATE TABLE j_orders (id int PRIMARY KEY, cust int, amount int);"
        "CREATE INDEX ON j_orders (cust);"
        "INSERT INTO j_region SELECT g, 'r' || g FROM generate_series(1, 30) g;"
        "INSERT INTO j_cust SELECT g, 'c' || g, g % 7 + 1 FROM generate_series(1, 30) g;"
        "INSERT INTO j_orders SELECT g, g % 13 + 1, g FROM generate_series(1, 30) g");
  }
};

TEST_F(Join, WritersOnEveryJoinedTableWithThreeDrainsConvergeToOracle) {
  create_tables();
  auto t = start(3);
  t->apply(
      "TRANSFORM j_inner FROM j_orders o JOIN j_cust c ON c.id = o.cust JOIN j_region r ON r.id "
      "= c.region SELECT c.name AS name, r.label AS label, o.amount AS amount");
  t->apply(
      "TRANSFORM j_left FROM j_orders o LEFT JOIN j_cust c ON c.id = o.cust LEFT JOIN j_region r "
      "ON r.id = c.region SELECT c.name || '/' || r.label AS path WHERE o.amount > -3");
  std::thread during([&] { run_writers(url_, 3, 150); });  // while the builds run
  await_status(*t, "j_inner", "live");
  await_status(*t, "j_left", "live");
  during.join();
  run_writers(url_, 4, 300);
  await_converged(*t);
  expect_oracle("j_inner");
  expect_oracle("j_left");
  EXPECT_GT(query("SELECT count(*) FROM j_left").get_int(0, 0), 0);
}

TEST_F(Join, AggregatesOverJoinsConvergeUnderWritersOnEveryTable) {
  create_tables();
  auto t = start(3);
  // Groups from a snowflake's far end, one state-only, one recomputed, one
  // without GROUP BY.
  t->apply(
      "TRANSFORM j_by_region FROM j_orders o LEFT JOIN j_cust c ON c.id = o.cust LEFT JOIN "
      "j_region r ON r.id = c.region GROUP BY r.label SELECT COUNT(*) AS n, SUM(o.amount) AS "
      "total, AVG(c.id) AS avg_cust");
  t->apply(
      "TRANSFORM j_names FROM j_orders o JOIN j_cust c ON c.id = o.cust GROUP BY c.region AS "
      "region SELECT STRING_AGG(c.name, ',' ORDER BY c.name, o.id) AS names, MAX(o.amount) AS "
      "top, MIN(c.name) AS first");
  t->apply(
      "TRANSFORM j_all FROM j_orders o JOIN j_cust c ON c.id = o.cust SELECT COUNT(*) AS n, "
      "SUM(o.amount + c.id) AS s");
  std::thread during([&] { run_writers(url_, 3, 150); });  // while the builds run
  await_status(*t, "j_by_region", "live");
  await_status(*t, "j_names", "live");
  await_status(*t, "j_all", "live");
  during.join();
  run_writers(url_, 4, 300);
  await_converged(*t);
  expect_oracle("j_by_region");
  expect_oracle("j_names");
  expect_oracle("j_all");
  // A group that only a write after the storm can make.
  sql("INSERT INTO j_region VALUES (901, 'late'); INSERT INTO j_cust VALUES (901, 'z', 901); "
      "INSERT INTO j_orders VALUES (901, 901, 7)");
  await_converged(*t);
  expect_oracle("j_by_region");
  EXPECT_EQ(query("SELECT n FROM j_by_region WHERE label = 'late'").get_int(0, 0), 1);
}

TEST_F(Join, ADroppedReferencingIndexIsReportedAsAJoinGap) {
  create_tables();
  auto t = start(1);
  t->apply(
      "TRANSFORM j_gap FROM j_orders o JOIN j_cust c ON c.id = o.cust LEFT JOIN j_region r ON "
      "r.id = c.region SELECT r.label AS label");
  await_status(*t, "j_gap", "live");
  EXPECT_TRUE(t->status("j_gap")->source_index_gaps.empty());
  sql("DROP INDEX j_cust_region_idx");
  auto gaps = t->status("j_gap")->source_index_gaps;
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].role, "join:r");
  EXPECT_EQ(gaps[0].table, "public.j_cust");
  EXPECT_EQ(gaps[0].columns, (std::vector<std::string>{"region"}));
  EXPECT_EQ(gaps[0].create_index, "CREATE INDEX ON \"public\".\"j_cust\" (\"region\")");
  sql("DROP INDEX j_orders_cust_idx");
  gaps = t->status("j_gap")->source_index_gaps;
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].role, "join:c");
  EXPECT_EQ(gaps[0].table, "public.j_orders");
  EXPECT_EQ(gaps[1].role, "join:r");
  // Without the indexes a change of a joined table still reaches its rows.
  sql("UPDATE j_region SET label = 'renamed' WHERE id = 3; UPDATE j_cust SET region = 4 WHERE id = "
      "1");
  await_converged(*t);
  expect_oracle("j_gap");
  for (const auto& g : gaps) sql(g.create_index);
  EXPECT_TRUE(t->status("j_gap")->source_index_gaps.empty());
}

}  // namespace trellis::test
