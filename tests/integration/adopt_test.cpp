// TRANSFORM ... ADOPT EXISTING TABLE (README, "Adopting an existing table"):
// the result's note lists what the adopted table kept beside what the
// transform writes and what Trellis added; the definition keeps the clause;
// a build of an adopted table under concurrent writes ends equal to its
// definition; a row the table's CHECK refuses is held in quarantine; DROP
// TRANSFORM leaves the table (and its rows) and removes only what adoption
// added.
#include <fmt/format.h>

#include <atomic>
#include <random>
#include <thread>

#include "support/harness.hpp"

namespace trellis::test {

class Adopt : public TrellisTest {
 protected:
  std::vector<std::string> columns(const std::string& table) {
    auto r = query("SELECT attname FROM pg_attribute WHERE attrelid = '" + table +
                   "'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum");
    std::vector<std::string> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(r.get(i, 0));
    return out;
  }
  // Applies `statement`, which must be refused with `code`; its message.
  std::string refusal(Trellis& t, const std::string& statement, ErrorCode code) {
    try {
      t.apply(statement);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "not refused: " << statement;
    return "";
  }
  bool exists(const std::string& table) {
    return query("SELECT to_regclass('" + table + "') IS NOT NULL").get_bool(0, 0);
  }
};

TEST_F(Adopt, TheNoteListsWhatTheTableKeptAndWhatWasAdded) {
  sql("CREATE TABLE orders (id int PRIMARY KEY, customer int, amount numeric(12,2));"
      "CREATE INDEX ON orders (customer);"
      "INSERT INTO orders SELECT x, x % 7, x * 1.5 FROM generate_series(1, 200) x;"
      "CREATE TABLE order_view (id int PRIMARY KEY, customer int, amount numeric(12,2),"
      "  seen_at timestamptz DEFAULT now(), remark text,"
      "  CONSTRAINT amount_positive CHECK (amount >= 0));"
      "CREATE INDEX order_view_customer ON order_view (customer);"
      "CREATE TABLE customer_totals (customer int, total numeric, n bigint, label text,"
      "  UNIQUE NULLS NOT DISTINCT (customer));");
  auto t = start(2);
  auto one = t->apply(
      "TRANSFORM order_view ADOPT EXISTING TABLE FROM orders SELECT customer AS customer, "
      "amount AS amount");
  EXPECT_EQ(one.kind, "transform");
  EXPECT_EQ(one.status, "waiting_to_backfill");
  EXPECT_EQ(one.note,
            "adopted table public.order_view; kept beside what the transform writes: column "
            "\"seen_at\", column \"remark\", index order_view_customer, CHECK constraint "
            "amount_positive (a row it refuses is held in quarantine)");
  auto agg = t->apply(
      "TRANSFORM customer_totals ADOPT EXISTING TABLE FROM orders GROUP BY customer "
      "SELECT SUM(amount) AS total, COUNT(*) AS n");
  EXPECT_EQ(agg.note,
            "adopted table public.customer_totals; kept beside what the transform writes: column "
            "\"label\"; added Trellis's hidden columns \"__n\", \"__c1\", \"__s1\", \"__nan1\", "
            "\"__group\", "
            "primary key (__group) (DROP TRANSFORM removes the hidden columns and leaves the "
            "table)");
  await_status(*t, "order_view", "live");
  await_status(*t, "customer_totals", "live");
  await_converged(*t);
  expect_oracle("order_view");
  expect_oracle("customer_totals");
  // What the user kept beside the transform's columns is left alone.
  EXPECT_EQ(query("SELECT count(*) FROM order_view WHERE seen_at IS NOT NULL AND remark IS NULL")
                .get_int(0, 0),
            200);
  bool found = false;
  for (const auto& d : t->definitions())
    if (d.target == "public.customer_totals") {
      found = true;
      EXPECT_EQ(d.statement,
                "TRANSFORM \"public\".\"customer_totals\" ADOPT EXISTING TABLE FROM "
                "\"public\".\"orders\" AS \"orders\" KEY (\"id\") GROUP BY \"customer\" SELECT "
                "sum(amount) AS \"total\", count(*) AS \"n\"");
    }
  EXPECT_TRUE(found);
}

TEST_F(Adopt, DropLeavesTheTableWithItsRowsAndRemovesWhatAdoptionAdded) {
  sql("CREATE TABLE visits (id int PRIMARY KEY, site text);"
      "CREATE INDEX ON visits (site);"
      "INSERT INTO visits SELECT x, 's' || (x % 3) FROM generate_series(1, 30) x;"
      "CREATE TABLE site_counts (site text, visits bigint, note text,"
      "  UNIQUE NULLS NOT DISTINCT (site));");
  auto t = start(2);
  t->apply(
      "TRANSFORM site_counts ADOPT EXISTING TABLE FROM visits GROUP BY site "
      "SELECT COUNT(*) AS visits");
  await_status(*t, "site_counts", "live");
  EXPECT_TRUE(exists("public.site_counts__ledger"));
  t->apply("PAUSE TRANSFORM site_counts");
  auto dropped = t->apply("DROP TRANSFORM site_counts");
  EXPECT_EQ(dropped.status, "dropped");
  EXPECT_EQ(dropped.note,
            "table public.site_counts was adopted, so it stays with its last rows and is no "
            "longer maintained; Trellis's hidden columns were removed");
  EXPECT_EQ(columns("public.site_counts"), (std::vector<std::string>{"site", "visits", "note"}));
  EXPECT_FALSE(exists("public.site_counts__ledger"));
  EXPECT_EQ(query("SELECT string_agg(site || '=' || visits, ',' ORDER BY site) FROM site_counts")
                .get(0, 0),
            "s0=10,s1=10,s2=10");
  // No longer maintained: a write to the source reaches nothing.
  sql("INSERT INTO visits VALUES (100, 's0')");
  EXPECT_FALSE(t->status("site_counts"));
  EXPECT_EQ(query("SELECT visits FROM site_counts WHERE site = 's0'").get_int(0, 0), 10);
  // Emptied, the same table can be adopted again and is built afresh.
  sql("TRUNCATE site_counts");
  t->apply(
      "TRANSFORM site_counts ADOPT EXISTING TABLE FROM visits GROUP BY site "
      "SELECT COUNT(*) AS visits");
  await_status(*t, "site_counts", "live");
  await_converged(*t);
  expect_oracle("site_counts");
  EXPECT_EQ(query("SELECT visits FROM site_counts WHERE site = 's0'").get_int(0, 0), 11);
  // A target Trellis created is still dropped with its DROP.
  t->apply("TRANSFORM created_counts FROM visits GROUP BY site SELECT COUNT(*) AS visits");
  t->apply("PAUSE TRANSFORM created_counts");
  EXPECT_EQ(t->apply("DROP TRANSFORM created_counts").note, "");
  EXPECT_FALSE(exists("public.created_counts"));
}

// Adoption locks the application's table under the 50 ms lock timeout of
// every DDL Trellis runs on a user table: while another session holds it,
// the statement is refused as a conflict (nothing registered), and goes
// through once the table is free.
TEST_F(Adopt, ATableAnotherSessionHoldsIsAConflictToRetry) {
  sql("CREATE TABLE src (id int PRIMARY KEY, n int);"
      "INSERT INTO src VALUES (1, 1);"
      "CREATE TABLE busy (id int PRIMARY KEY, n int)");
  auto t = start(2);
  auto other = pg::Connection::open(url_, {.search_path = "public"});
  other->exec("BEGIN");
  other->exec("SELECT count(*) FROM busy");
  EXPECT_EQ(refusal(*t, "TRANSFORM busy ADOPT EXISTING TABLE FROM src SELECT n AS n",
                    ErrorCode::conflict),
            "table public.busy is in use by another session (its lock was not granted within "
            "50 ms); run the statement again once it is free");
  EXPECT_FALSE(t->status("busy"));
  other->exec("COMMIT");
  t->apply("TRANSFORM busy ADOPT EXISTING TABLE FROM src SELECT n AS n");
  await_status(*t, "busy", "live");
  await_converged(*t);
  expect_oracle("busy");
}

// Adoption adds to the table and DROP TRANSFORM takes that away again, so
// Trellis's role must own it; a table another role owns is refused naming
// the owner and the ALTER TABLE ... OWNER TO that fixes it.
TEST_F(Adopt, ATableAnotherRoleOwnsIsRefusedUntilOwnershipIsGiven) {
  const std::string role = "trellis_adopt_app";
  ensure_login_role(role);
  std::string db = query("SELECT current_database()").get(0, 0);
  std::string owner = query("SELECT current_user").get(0, 0);
  sql("CREATE TABLE src (id int PRIMARY KEY, n int); INSERT INTO src VALUES (1, 1), (2, 2);"
      "CREATE TABLE owned_elsewhere (id int PRIMARY KEY, n int)");
  sql(
      fmt::format("ALTER TABLE src OWNER TO {0}; GRANT CREATE ON DATABASE \"{1}\" TO {0}; "
                  "GRANT USAGE, CREATE ON SCHEMA public TO {0}; "
                  "GRANT SELECT, INSERT, UPDATE, DELETE ON owned_elsewhere TO {0}",
                  role, db));
  Options o = options(2, true);
  o.url = url_as(role);
  auto t = Trellis::connect(o);
  EXPECT_EQ(refusal(*t, "TRANSFORM owned_elsewhere ADOPT EXISTING TABLE FROM src SELECT n AS n",
                    ErrorCode::validation),
            "table public.owned_elsewhere cannot be adopted: role " + role +
                " does not own table public.owned_elsewhere (its owner is " + owner +
                "), and adopting it adds to it: ALTER TABLE public.owned_elsewhere OWNER TO " +
                role);
  sql("ALTER TABLE owned_elsewhere OWNER TO " + role);
  t->apply("TRANSFORM owned_elsewhere ADOPT EXISTING TABLE FROM src SELECT n AS n");
  await_status(*t, "owned_elsewhere", "live");
  await_converged(*t);
  expect_oracle("owned_elsewhere");
  t->shutdown();
}

// A CHECK constraint is kept on an adopted table: a row it refuses is held
// in quarantine like any failing row, the others flow, and release_key
// re-derives it once its source row is fixed.
TEST_F(Adopt, ARowTheTablesCheckRefusesIsHeldInQuarantineUntilReleased) {
  sql("CREATE TABLE src (id int PRIMARY KEY, n int);"
      "INSERT INTO src SELECT g, g FROM generate_series(1, 50) g;"
      "UPDATE src SET n = -5 WHERE id = 7;"
      "CREATE TABLE checked (id int PRIMARY KEY, n int, CONSTRAINT n_positive CHECK (n >= 0))");
  auto t = start(2);
  auto applied = t->apply("TRANSFORM checked ADOPT EXISTING TABLE FROM src SELECT n AS n");
  EXPECT_NE(applied.note.find("CHECK constraint n_positive"), std::string::npos) << applied.note;
  await_status(*t, "checked", "live");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::optional<Status> s;
  while (std::chrono::steady_clock::now() < deadline) {
    s = t->status("checked");
    if (s && s->held_keys && s->held_keys->count == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(s && s->held_keys && s->held_keys->count == 1) << "the refused row was never held";
  EXPECT_EQ(s->status, "live");
  auto page = t->sample_quarantined("checked", 10);
  ASSERT_EQ(page.keys.size(), 1u);
  EXPECT_EQ(page.keys[0].key, "[\"7\"]");
  EXPECT_EQ(page.keys[0].sqlstate, "23514");
  EXPECT_EQ(query("SELECT count(*) FROM checked").get_int(0, 0), 49);
  sql("UPDATE src SET n = 7 WHERE id = 7");
  t->release_key("checked", "src", "[\"7\"]");
  await_converged(*t);
  EXPECT_EQ(query("SELECT n FROM checked WHERE id = 7").get_int(0, 0), 7);
  expect_oracle("checked");
}

TEST_F(Adopt, BuildOfAnAdoptedTableConvergesUnderConcurrentWrites) {
  sql("CREATE TABLE items (id int PRIMARY KEY, grp int, qty int, label text);"
      "CREATE INDEX ON items (grp);"
      "INSERT INTO items SELECT x, x % 50, x % 13, 'l' || x FROM generate_series(1, 20000) x;"
      "CREATE TABLE item_view (id int PRIMARY KEY, grp int, twice int, extra text);"
      "CREATE TABLE grp_totals (grp int, qty bigint, n bigint, biggest int,"
      "  touched timestamptz DEFAULT now(), UNIQUE NULLS NOT DISTINCT (grp));");
  auto t = start(3);
  std::atomic<bool> stop = false;
  std::thread writer([&] {
    auto conn = pg::Connection::open(url_, {.search_path = "public"});
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> id(1, 25000), kind(0, 3), val(0, 100);
    while (!stop) {
      std::string k = std::to_string(id(rng)), v = std::to_string(val(rng));
      switch (kind(rng)) {
        case 0:
          conn->exec("INSERT INTO items VALUES (" + k + ", " + v + " % 60, " + v +
                     ", 'w') ON CONFLICT (id) DO UPDATE SET qty = EXCLUDED.qty");
          break;
        case 1:
          conn->exec("UPDATE items SET grp = " + v + " % 55 WHERE id = " + k);
          break;
        case 2:
          conn->exec("UPDATE items SET qty = qty + " + v + " WHERE id = " + k);
          break;
        default:
          conn->exec("DELETE FROM items WHERE id = " + k);
      }
    }
  });
  t->apply(
      "TRANSFORM item_view ADOPT EXISTING TABLE FROM items SELECT grp AS grp, "
      "qty * 2 AS twice");
  t->apply(
      "TRANSFORM grp_totals ADOPT EXISTING TABLE FROM items GROUP BY grp "
      "SELECT SUM(qty) AS qty, COUNT(*) AS n, MAX(qty) AS biggest");
  await_status(*t, "item_view", "live");
  await_status(*t, "grp_totals", "live");
  stop = true;
  writer.join();
  await_converged(*t);
  expect_oracle("item_view");
  expect_oracle("grp_totals");
  EXPECT_GT(query("SELECT count(*) FROM item_view").get_int(0, 0), 10000);
}

}  // namespace trellis::test
