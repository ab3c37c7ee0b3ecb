// ALTER TRANSFORM through the API: what `apply` reports, that a field build
// writes only the fields it names (other columns keep the values drains gave
// them), and that an edit under a stream of concurrent writes converges.
#include <atomic>
#include <random>
#include <thread>

#include "support/harness.hpp"

namespace trellis::test {

class Alter : public TrellisTest {
 protected:
  void create_items(int rows) {
    sql("CREATE TABLE items (id int PRIMARY KEY, qty int, name text, price numeric(8,2));"
        "INSERT INTO items SELECT g, g % 7, 'n' || g, g * 1.5 FROM generate_series(1, " +
        std::to_string(rows) + ") g");
  }
  std::string columns(const std::string& table) {
    return query(
               "SELECT string_agg(attname || ':' || format_type(atttypid, atttypmod), ',' "
               "ORDER BY attnum) FROM pg_attribute WHERE attrelid = '" +
               table + "'::regclass AND attnum > 0 AND NOT attisdropped")
        .get(0, 0);
  }
  // Random single-row writes to items until `stop`, counted in `writes`.
  void write_items(std::atomic<bool>& stop, std::atomic<int>& writes) {
    auto conn = pg::Connection::open(url_, {.search_path = "public"});
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> key(1, 3500), kind(0, 3), val(0, 20);
    while (!stop) {
      std::string k = std::to_string(key(rng)), v = std::to_string(val(rng));
      switch (kind(rng)) {
        case 0:
          conn->exec("UPDATE items SET qty = " + v + " WHERE id = " + k);
          break;
        case 1:
          conn->exec("UPDATE items SET name = name || 'x', price = price + 1 WHERE id = " + k);
          break;
        case 2:
          conn->exec("INSERT INTO items VALUES (" + k + ", " + v + ", 'i" + v +
                     "', 1) ON CONFLICT (id) DO UPDATE SET price = EXCLUDED.price + 2");
          break;
        default:
          conn->exec("DELETE FROM items WHERE id = " + k);
      }
      ++writes;
    }
  }
};

TEST_F(Alter, ReportsOnlyTheFieldsItChanged) {
  create_items(50);
  auto t = start();
  t->apply("TRANSFORM items_t FROM items SELECT qty * 2 AS q2, upper(name) AS uname, price AS p");
  await_status(*t, "items_t", "live");

  auto applied = t->apply(
      "ALTER TRANSFORM items_t ADD qty + 10 AS qty10, DROP p, ALTER uname AS lower(name), "
      "DROP not_there");
  EXPECT_EQ(applied.kind, "alter");
  EXPECT_EQ(applied.target, "public.items_t");
  EXPECT_EQ(applied.status, "backfilling");
  EXPECT_EQ(applied.added, std::vector<std::string>{"qty10"});
  EXPECT_EQ(applied.dropped, std::vector<std::string>{"p"});
  EXPECT_EQ(applied.altered, std::vector<std::string>{"uname"});
  EXPECT_EQ(columns("items_t"), "id:integer,q2:integer,uname:text,qty10:integer");
  await_status(*t, "items_t", "live");
  await_converged(*t);
  expect_oracle("items_t");

  // The same edit again changes nothing and leaves the transform live.
  auto again =
      t->apply("ALTER TRANSFORM items_t ADD qty + 10 AS qty10, DROP p, ALTER uname AS lower(name)");
  EXPECT_EQ(again.status, "live");
  EXPECT_TRUE(again.added.empty());
  EXPECT_TRUE(again.dropped.empty());
  EXPECT_TRUE(again.altered.empty());

  // Added then dropped in one statement cancels out.
  auto cancelled = t->apply("ALTER TRANSFORM items_t ADD qty AS tmp, DROP tmp");
  EXPECT_TRUE(cancelled.added.empty() && cancelled.dropped.empty());
  EXPECT_EQ(columns("items_t"), "id:integer,q2:integer,uname:text,qty10:integer");

  // DROP then ADD re-creates the column with the new expression's type.
  auto recreated = t->apply("ALTER TRANSFORM items_t DROP q2, ADD qty * 2.5 AS q2");
  EXPECT_EQ(recreated.added, std::vector<std::string>{"q2"});
  EXPECT_EQ(recreated.dropped, std::vector<std::string>{"q2"});
  EXPECT_EQ(columns("items_t"), "id:integer,uname:text,qty10:integer,q2:numeric");
  await_status(*t, "items_t", "live");
  await_converged(*t);
  expect_oracle("items_t");
  auto stored = t->definitions();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].statement,
            "TRANSFORM \"public\".\"items_t\" FROM \"public\".\"items\" AS \"items\" KEY "
            "(\"id\") SELECT lower(name) AS \"uname\", qty + 10 AS \"qty10\", qty * 2.5 AS "
            "\"q2\"");
}

// The field build writes only the fields it names: a column of the target
// changed behind Trellis's back (which no capture sees) keeps that value
// through an ALTER of another field, while the altered field is rebuilt on
// every row.
TEST_F(Alter, FieldBuildWritesOnlyTheFieldsItNames) {
  create_items(300);
  auto t = start();
  t->apply("TRANSFORM items_t FROM items SELECT qty AS q, name AS nm");
  await_status(*t, "items_t", "live");
  sql("UPDATE items_t SET q = -1 WHERE id <= 5");
  t->apply("ALTER TRANSFORM items_t ALTER nm AS name || '!'");
  await_status(*t, "items_t", "live");
  await_converged(*t);
  EXPECT_EQ(query("SELECT count(*) FROM items_t WHERE q = -1").get_int(0, 0), 5);
  EXPECT_EQ(query("SELECT count(*) FROM items_t t JOIN items i USING (id) WHERE t.nm = i.name "
                  "|| '!'")
                .get_int(0, 0),
            300);
}

TEST_F(Alter, EditUnderConcurrentWritesConvergesToOracle) {
  create_items(3000);
  auto t = start(2);
  t->apply(
      "TRANSFORM items_t FROM items SELECT qty * 2 AS q2, upper(name) AS uname "
      "WHERE qty <> 3");
  await_status(*t, "items_t", "live");
  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  std::string writer_error;
  std::thread writer([&] {
    try {
      write_items(stop, writes);
    } catch (const std::exception& e) {
      writer_error = e.what();
      stop = true;
    }
  });
  auto wait_writes = [&](int more) {
    int until = writes + more;
    while (writes < until && !stop) std::this_thread::yield();
  };
  wait_writes(200);
  // The added field reads a column (price) capture did not read before.
  t->apply("ALTER TRANSFORM items_t ADD price * 2 AS p2, ALTER uname AS lower(name)");
  wait_writes(300);
  await_status(*t, "items_t", "live");
  wait_writes(200);
  t->apply("ALTER TRANSFORM items_t DROP q2, ADD coalesce(price, 0) + qty AS mix");
  wait_writes(300);
  stop = true;
  writer.join();
  EXPECT_EQ(writer_error, "");
  await_status(*t, "items_t", "live");
  await_converged(*t);
  expect_oracle("items_t");
}

}  // namespace trellis::test
