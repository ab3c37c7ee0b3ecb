// Joins under concurrency: writers on the source and on every joined table
// at once (inserts, updates of read and join columns, key changes, deletes)
// while three drain threads run, during the build and after it; once writes
// stop, each target (1-1, aggregate, a join that fans out) must equal its
// definition. A join's referencing index dropped later shows as a gap. And
// the race a join that fans out adds (docs/architecture.md, joins that fan
// out): a drain that maps a changed row of the fanning table through the
// target must first wait for a re-derive whose snapshot predates the change.
#include <random>
#include <thread>

#include "support/child_workers.hpp"
#include "support/gate.hpp"
#include "support/harness.hpp"

namespace trellis::test {

namespace {

// `ops` random single-statement transactions over the three tables (and
// the order lines when `kinds` is 17).
void write_joined(const std::string& url, int seed, int ops, int kinds) {
  auto conn = pg::Connection::open(url, {.search_path = "public"});
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> id(1, 30), kind(0, kinds - 1), val(-5, 5);
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
      case 11:
        stmt = "UPDATE j_cust SET region = NULL WHERE id = " + a;
        break;
      // The lines of an order (a join that fans out): new, moved, gone,
      // re-keyed, orphaned.
      case 12:
        stmt = "INSERT INTO j_lines VALUES (" + a + ", " + b + ", " + v +
               ") ON CONFLICT (id) DO UPDATE SET order_id = EXCLUDED.order_id";
        break;
      case 13:
        stmt = "UPDATE j_lines SET order_id = " + b + " WHERE id = " + a;
        break;
      case 14:
        stmt = "DELETE FROM j_lines WHERE id = " + a;
        break;
      case 15:
        stmt = "UPDATE j_lines SET id = " + b + ", qty = qty + 1 WHERE id = " + a +
               " AND NOT EXISTS (SELECT 1 FROM j_lines WHERE id = " + b + ")";
        break;
      default:
        stmt = "UPDATE j_lines SET order_id = NULL WHERE id = " + a;
    }
    try {
      conn->exec_script(stmt);
    } catch (const std::exception&) {
      conn->exec_script("ROLLBACK");
    }
  }
}

void run_writers(const std::string& url, int writers, int ops, int kinds = 12) {
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) threads.emplace_back(write_joined, url, 300 + w, ops, kinds);
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
  // f_orders and their f_lines (a join from the orders fans out), empty.
  void create_orders_with_lines() {
    sql("CREATE TABLE f_orders (id int PRIMARY KEY, note text);"
        "CREATE TABLE f_lines (id int PRIMARY KEY, order_id int, qty int);"
        "CREATE INDEX ON f_lines (order_id)");
  }
  // Orders 1 and 2 without lines, public.first_gate, and `target` defined
  // by `statement` (reading first_gate), built and converged by a handle
  // that is gone when this returns.
  void define_over_gated_lines(const std::string& statement, const std::string& target) {
    sql(kFirstGateFunction);
    create_orders_with_lines();
    sql("INSERT INTO f_orders VALUES (1, 'a'), (2, 'b')");
    auto t = start(1);
    t->apply(statement);
    await_status(*t, target, "live");
    await_converged(*t);
  }
  // Orders 1-3 and 2,000 lines of orders 1 and 2, and public.counted(x),
  // which returns x and counts its calls (evals()): how many rows a change
  // makes a transform evaluate. The oracle evaluates the fields over the
  // whole join, so a test reads the count before it.
  void create_counted_lines() {
    sql("CREATE SEQUENCE evals; CREATE FUNCTION counted(x int) RETURNS int LANGUAGE plpgsql "
        "IMMUTABLE AS $$ BEGIN PERFORM nextval('public.evals'); RETURN x; END $$");
    create_orders_with_lines();
    sql("INSERT INTO f_orders SELECT g, 'o' || g FROM generate_series(1, 3) g;"
        "INSERT INTO f_lines SELECT g, g % 2 + 1, g FROM generate_series(1, 2000) g");
  }
  int64_t evals() { return query("SELECT last_value FROM evals").get_int(0, 0); }
  // The evaluations `change` makes once the transforms converge.
  int64_t evaluations_of(Trellis& t, const std::string& change) {
    int64_t before = evals();
    sql(change);
    await_converged(t);
    return evals() - before;
  }
  // Applies each definition, then waits for every target to be live and
  // for the whole to converge.
  void define_live(Trellis& t, const std::vector<std::pair<std::string, std::string>>& defs) {
    for (const auto& d : defs) t.apply(d.first);
    for (const auto& d : defs) await_status(t, d.second, "live");
    await_converged(t);
  }
  void create_lines() {
    sql("CREATE TABLE j_lines (id int PRIMARY KEY, order_id int, qty int);"
        "CREATE INDEX ON j_lines (order_id);"
        "INSERT INTO j_lines SELECT g, g % 17 + 1, g FROM generate_series(1, 30) g");
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

TEST_F(Join, FanningJoinsConvergeUnderWritersOnEveryTable) {
  create_tables();
  create_lines();
  auto t = start(3);
  t->apply(
      "TRANSFORM j_fan FROM j_orders o JOIN j_lines l ON l.order_id = o.id LEFT JOIN j_cust c ON "
      "c.id = o.cust SELECT l.qty * 2 AS qty2, c.name AS name");
  t->apply(
      "TRANSFORM j_fan_left FROM j_cust c LEFT JOIN j_orders o ON o.cust = c.id LEFT JOIN j_lines "
      "l ON l.order_id = o.id SELECT l.qty AS qty, o.amount AS amount WHERE c.name IS NULL OR "
      "c.name NOT LIKE '%xx%'");
  // A WHERE over the fanning LEFT JOINs that rejects matches and passes the
  // rows without one (its rejected matches kept beside the target).
  t->apply(
      "TRANSFORM j_fan_kept FROM j_cust c LEFT JOIN j_orders o ON o.cust = c.id LEFT JOIN j_lines "
      "l ON l.order_id = o.id SELECT l.qty AS qty WHERE l.qty IS NULL OR l.qty % 3 <> 0");
  std::thread during([&] { run_writers(url_, 3, 150, 17); });  // while the builds run
  for (const char* name : {"j_fan", "j_fan_left", "j_fan_kept"}) await_status(*t, name, "live");
  during.join();
  run_writers(url_, 4, 300, 17);
  await_converged(*t);
  for (const char* name : {"j_fan", "j_fan_left", "j_fan_kept"}) expect_oracle(name);
  // An order with two lines only writes after the storm make.
  sql("INSERT INTO j_orders VALUES (901, 1, 7); INSERT INTO j_lines VALUES (901, 901, 1), (902, "
      "901, 2)");
  await_converged(*t);
  expect_oracle("j_fan");
  EXPECT_EQ(query("SELECT count(*) FROM j_fan WHERE id = 901").get_int(0, 0), 2);
}

TEST_F(Join, AggregatesOverFanningJoinsConvergeUnderWritersOnEveryTable) {
  create_tables();
  create_lines();
  auto t = start(3);
  // Customers with their orders (fans out) and those orders' lines (fans
  // out again): per region, per customer (LEFT: a customer without orders
  // counts 0), one row over all, and the distinct form.
  t->apply(
      "TRANSFORM a_region FROM j_cust c JOIN j_orders o ON o.cust = c.id GROUP BY c.region SELECT "
      "COUNT(*) AS n, SUM(o.amount) AS total, MAX(o.amount) AS top");
  t->apply(
      "TRANSFORM a_cust FROM j_cust c LEFT JOIN j_orders o ON o.cust = c.id LEFT JOIN j_lines l ON "
      "l.order_id = o.id GROUP BY c.id SELECT COUNT(l.id) AS lines, SUM(l.qty) AS qty, "
      "STRING_AGG(o.id::text, ',' ORDER BY o.id, l.id) AS orders");
  t->apply(
      "TRANSFORM a_all FROM j_orders o JOIN j_lines l ON l.order_id = o.id SELECT COUNT(*) AS n, "
      "SUM(l.qty * o.amount) AS s");
  t->apply(
      "TRANSFORM a_pairs FROM j_cust c JOIN j_orders o ON o.cust = c.id GROUP BY c.region, "
      "o.amount AS amount");
  // Per customer over the orders its WHERE keeps, and the customers none
  // of whose orders it keeps, with 0.
  t->apply(
      "TRANSFORM a_kept FROM j_cust c LEFT JOIN j_orders o ON o.cust = c.id GROUP BY c.id SELECT "
      "COUNT(o.id) AS n, SUM(o.amount) AS total WHERE o.amount IS NULL OR o.amount % 4 <> 0");
  std::thread during([&] { run_writers(url_, 3, 150, 17); });  // while the builds run
  for (const char* name : {"a_region", "a_cust", "a_all", "a_pairs", "a_kept"})
    await_status(*t, name, "live");
  during.join();
  run_writers(url_, 4, 300, 17);
  await_converged(*t);
  for (const char* name : {"a_region", "a_cust", "a_all", "a_pairs", "a_kept"}) expect_oracle(name);
  // A customer whose two orders and three lines only writes after the
  // storm make.
  sql("INSERT INTO j_cust VALUES (901, 'z', 901); INSERT INTO j_orders VALUES (901, 901, 7), (902, "
      "901, 1); INSERT INTO j_lines VALUES (901, 901, 1), (902, 901, 2), (903, 902, 3)");
  await_converged(*t);
  expect_oracle("a_cust");
  expect_oracle("a_region");
  EXPECT_EQ(query("SELECT lines FROM a_cust WHERE id = 901").get_int(0, 0), 3);
  EXPECT_EQ(query("SELECT n FROM a_region WHERE region = 901").get_int(0, 0), 2);
}

// A line inserted for order 1 is re-derived by a drain, held open by the
// field's gate with its snapshot taken; the line then moves to order 2. The
// drain that maps the moved line reads which orders the target holds it
// for, so it must not run before the first commits its row (1, line), or it
// misses order 1 and that row stays for good: the move's segment must not
// be promoted while the first re-derive is open (its xid is older than the
// segment's fence).
TEST_F(Join, AMovedFanningRowWaitsForAReDeriveThatPredatesTheMove) {
  define_over_gated_lines(
      "TRANSFORM f_view FROM f_orders o JOIN f_lines l ON l.order_id = o.id SELECT "
      "public.first_gate(l.qty) AS v",
      "f_view");
  auto gate = hold_gate(url_, kNegativeGate);
  auto t = start(2);
  sql("INSERT INTO f_lines VALUES (10, 1, -1)");
  bool held = await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory");
  if (held) sql("UPDATE f_lines SET order_id = 2 WHERE id = 10");
  // Must not come true while the gate is held: the move re-derived.
  bool early =
      held &&
      eventually(
          [&] { return query("SELECT count(*) FROM f_view WHERE id = 2").get_int(0, 0) > 0; },
          std::chrono::seconds(5));
  release_gate(*gate, kNegativeGate);
  ASSERT_TRUE(held) << "no re-derive reached the gate";
  EXPECT_FALSE(early) << "the move was drained while a re-derive older than it was open";
  await_converged(*t);
  expect_oracle("f_view");
  EXPECT_EQ(query("SELECT id FROM f_view").get(0, 0), "2");
}

// A WHERE over a LEFT JOIN that fans out rejects a line: order 1 loses its
// row without a match, and the line is kept among the rejected matches.
// The re-derive is held open by the WHERE's gate, its snapshot taken with
// the line in it, while the line is deleted. The rejected match must be
// written in that re-derive's snapshot (in the statement writing the
// target), not in a later statement of its transaction, whose snapshot no
// longer has the line: then neither table would hold it, the deletion would
// reach no order, and order 1 would never get its row without a match back.
TEST_F(Join, ARejectedMatchIsKeptInTheSnapshotItsTargetRowsWereComputedIn) {
  define_over_gated_lines(
      "TRANSFORM f_kept FROM f_orders o LEFT JOIN f_lines l ON l.order_id = o.id SELECT l.qty AS "
      "q WHERE public.first_gate(l.qty) IS NULL OR public.first_gate(l.qty) % 5 <> 0",
      "f_kept");
  EXPECT_EQ(query("SELECT count(*) FROM f_kept WHERE id = 1 AND l_id IS NULL").get_int(0, 0), 1);
  auto gate = hold_gate(url_, kNegativeGate);
  auto t = start(2);
  sql("INSERT INTO f_lines VALUES (10, 1, -5)");
  bool held = await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory");
  if (held) sql("DELETE FROM f_lines WHERE id = 10");
  release_gate(*gate, kNegativeGate);
  ASSERT_TRUE(held) << "no re-derive reached the gate";
  await_converged(*t);
  expect_oracle("f_kept");
  EXPECT_EQ(query("SELECT count(*) FROM f_kept WHERE id = 1 AND l_id IS NULL").get_int(0, 0), 1);
}

// A line whose field fails (a division by zero) holds its order's key in
// quarantine: the order's other lines wait with it, every other order keeps
// flowing, and once the line is fixed the release re-derives the order.
TEST_F(Join, AFailingFannedRowHoldsItsSourceKeyUntilReleased) {
  create_orders_with_lines();
  sql("INSERT INTO f_orders SELECT g, 'o' || g FROM generate_series(1, 20) g;"
      "INSERT INTO f_lines SELECT g, g % 20 + 1, g FROM generate_series(1, 40) g;"
      "INSERT INTO f_lines VALUES (100, 7, 0)");
  auto t = start(2);
  t->apply(
      "TRANSFORM f_inv FROM f_orders o JOIN f_lines l ON l.order_id = o.id SELECT 1000 / l.qty AS "
      "inv");
  await_status(*t, "f_inv", "live");
  auto held = [&] {
    auto s = t->status("f_inv");
    return s && s->held_keys ? s->held_keys->count : 0;
  };
  ASSERT_TRUE(eventually([&] { return held() == 1; }, std::chrono::seconds(60)));
  auto page = t->sample_quarantined("f_inv", 10);
  ASSERT_EQ(page.keys.size(), 1u);
  EXPECT_EQ(page.keys[0].table, "public.f_orders");
  EXPECT_EQ(page.keys[0].key, "[\"7\"]");
  EXPECT_EQ(query("SELECT count(*) FROM f_inv WHERE id = 7").get_int(0, 0), 0);
  // Another order's lines still flow, one of them moving in from order 7.
  sql("UPDATE f_lines SET qty = 500 WHERE order_id = 3; UPDATE f_lines SET order_id = 3 WHERE id = "
      "6");
  EXPECT_TRUE(eventually(
      [&] {
        return query("SELECT count(*) FROM f_inv WHERE id = 3 AND (inv = 2 OR l_id = 6)")
                   .get_int(0, 0) == 3;
      },
      std::chrono::seconds(30)));
  sql("UPDATE f_lines SET qty = 4 WHERE id = 100");
  t->release_key("f_inv", "f_orders", "7");
  ASSERT_TRUE(eventually([&] { return held() == 0; }, std::chrono::seconds(30)));
  await_converged(*t);
  expect_oracle("f_inv");
  EXPECT_EQ(query("SELECT inv FROM f_inv WHERE id = 7 AND l_id = 100").get_int(0, 0), 250);
}

// Build ranges over a join that fans out count the rows the join gives:
// four orders of 300 lines each, ranges of 100 rows, so the first range
// ends at the first order (by source rows alone it would be one open range
// of all four orders, 1,200 rows in one transaction).
TEST_F(Join, BuildRangesOverAFanningJoinCountTheJoinedRows) {
  sql(kGateFunction);
  create_orders_with_lines();
  sql("INSERT INTO f_orders SELECT g, 'o' || g FROM generate_series(1, 4) g;"
      "INSERT INTO f_lines SELECT g, g % 4 + 1, g FROM generate_series(1, 1200) g");
  auto gate = hold_gate(url_, kPositiveGate);
  Options o = options(1);
  o.build_range_rows = 100;
  auto t = Trellis::connect(o);
  t->apply(
      "TRANSFORM f_big FROM f_orders o JOIN f_lines l ON l.order_id = o.id SELECT "
      "public.gate(l.qty) AS q");
  bool held = await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory");
  std::string first_hi =
      held ? query("SELECT coalesce(hi::text, 'open') FROM trellis.range_claims WHERE NOT done")
                 .get(0, 0)
           : "";
  release_gate(*gate, kPositiveGate);
  ASSERT_TRUE(held) << "no build range reached the gate";
  EXPECT_EQ(first_hi, "{1}");
  await_status(*t, "f_big", "live");
  await_converged(*t);
  expect_oracle("f_big");
}

// A changed line of an order with 1,000 lines re-derives the target rows
// it reaches (its row under its old and its new order), not every row of
// those orders: the field counts its evaluations. A LEFT JOIN's row
// without a match comes and goes with the pairs too.
TEST_F(Join, AChangedFanningRowReDerivesOnlyTheRowsItReaches) {
  create_counted_lines();
  auto t = start(2);
  // A second transform over the same join: the source keys the first one's
  // mapping puts in the page are partial for it too.
  define_live(*t, {{"TRANSFORM f_counted FROM f_orders o LEFT JOIN f_lines l ON l.order_id = o.id "
                    "SELECT public.counted(l.qty) AS q",
                    "f_counted"},
                   {"TRANSFORM f_counted2 FROM f_orders o JOIN f_lines l ON l.order_id = o.id "
                    "SELECT public.counted(l.qty + 1) AS q",
                    "f_counted2"}});
  // Line 10's row and line 11's row under order 3, which had no line (order
  // 3's row without a match goes) in each target: a few evaluations, where a
  // whole re-derive of orders 1, 2 and 3 makes 2,000 per target.
  EXPECT_LT(evaluations_of(*t,
                           "UPDATE f_lines SET qty = -1 WHERE id = 10; UPDATE f_lines SET order_id "
                           "= 3 WHERE id = 11"),
            10);
  expect_oracle("f_counted");
  expect_oracle("f_counted2");
  // Order 3 is left without a line.
  EXPECT_LT(evaluations_of(*t, "DELETE FROM f_lines WHERE id = 11"), 10);
  expect_oracle("f_counted");
  expect_oracle("f_counted2");
  EXPECT_EQ(query("SELECT count(*) FROM f_counted WHERE id = 3 AND l_id IS NULL").get_int(0, 0), 1);
}

TEST_F(Join, AChangedFanningRowRewritesOnlyTheLedgerEntriesItReaches) {
  create_counted_lines();
  auto t = start(2);
  // Per order through a LEFT JOIN (an order without lines has SUM NULL and
  // COUNT 0), and per note parity through an INNER one; a 1-1 over the same
  // join maps the same lines into the page for itself.
  t->apply(
      "TRANSFORM f_sums FROM f_orders o LEFT JOIN f_lines l ON l.order_id = o.id GROUP BY o.id "
      "SELECT SUM(public.counted(l.qty)) AS s, COUNT(l.id) AS n");
  t->apply(
      "TRANSFORM f_by_note FROM f_orders o JOIN f_lines l ON l.order_id = o.id GROUP BY "
      "length(o.note) AS len WITHOUT SOURCE INDEX SELECT SUM(public.counted(l.qty + 1)) AS s");
  t->apply(
      "TRANSFORM f_rows FROM f_orders o JOIN f_lines l ON l.order_id = o.id SELECT l.qty AS q");
  for (const char* name : {"f_sums", "f_by_note", "f_rows"}) await_status(*t, name, "live");
  await_converged(*t);
  // Each changed line's entries, before and after, in each aggregate: a few
  // evaluations, where rewriting every entry of orders 1, 2 and 3 makes
  // 2,000 per aggregate. Then order 3 is left without a line.
  EXPECT_LT(evaluations_of(*t,
                           "UPDATE f_lines SET qty = -1 WHERE id = 10; UPDATE f_lines SET order_id "
                           "= 3 WHERE id = 11"),
            20);
  for (const char* name : {"f_sums", "f_by_note", "f_rows"}) expect_oracle(name);
  EXPECT_LT(evaluations_of(*t, "DELETE FROM f_lines WHERE id = 11"), 20);
  for (const char* name : {"f_sums", "f_by_note", "f_rows"}) expect_oracle(name);
  auto order3 = query("SELECT s, n FROM f_sums WHERE id = 3");
  ASSERT_EQ(order3.rows(), 1);
  EXPECT_TRUE(order3.is_null(0, 0));
  EXPECT_EQ(order3.get_int(0, 1), 0);
  // A change of the source row itself still rewrites all its entries.
  EXPECT_GE(evaluations_of(*t, "UPDATE f_orders SET note = 'longer' WHERE id = 1"), 1000);
  for (const char* name : {"f_sums", "f_by_note", "f_rows"}) expect_oracle(name);
}

// A TRUNCATE of a joined table makes every source key whole for each
// transform that reads the table, also when another transform's mapping
// put the key in the page first, as a key reached only through that
// transform's join: f_named's to-one mapping of a changed customer puts
// orders 1 and 2 in the page beside the TRUNCATE sentinel of f_lines (one
// segment: no worker runs while both commit; one page: a drain claims the
// segment's small buckets together). f_lined must lose every row. (With the
// page's keys for TRUNCATE inserted after f_named's mapping, they were not
// added again, stayed partial for f_lined, and its rows stayed.)
TEST_F(Join, ATruncatedJoinedTableEmptiesRowsOfKeysAnotherTransformMappedFirst) {
  create_orders_with_lines();
  sql("CREATE TABLE f_cust (id int PRIMARY KEY, name text);"
      "ALTER TABLE f_orders ADD COLUMN cust int; CREATE INDEX ON f_orders (cust);"
      "INSERT INTO f_cust VALUES (1, 'a');"
      "INSERT INTO f_orders VALUES (1, 'x', 1), (2, 'y', 1);"
      "INSERT INTO f_lines SELECT g, g % 2 + 1, g FROM generate_series(1, 10) g");
  define_live(*start(1),
              {{"TRANSFORM f_named FROM f_orders o JOIN f_cust c ON c.id = o.cust SELECT c.name "
                "AS name",
                "f_named"},
               {"TRANSFORM f_lined FROM f_orders o JOIN f_lines l ON l.order_id = o.id SELECT "
                "l.qty AS qty",
                "f_lined"}});  // the workers stop with the handle
  ASSERT_EQ(query("SELECT count(*) FROM f_lined").get_int(0, 0), 10);
  sql("UPDATE f_cust SET name = 'b' WHERE id = 1; TRUNCATE f_lines");
  auto t = start(1);
  await_converged(*t);
  expect_oracle("f_named");
  expect_oracle("f_lined");
  EXPECT_EQ(query("SELECT count(*) FROM f_lined").get_int(0, 0), 0);
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
