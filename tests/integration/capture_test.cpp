// What the capture triggers stage for each kind of write, read straight from
// the ring with no worker running: the keys a drain will re-derive, no more
// and no fewer.
#include <fmt/format.h>

#include "support/harness.hpp"

namespace trellis::test {

class Capture : public TrellisTest {
 protected:
  // Defines the transform, waits until it is live, then stops the workers so
  // nothing seals, drains or truncates: every staged row stays in the ring.
  void define_and_stop(const std::string& statement, const std::string& target) {
    auto t = start();
    t->apply(statement);
    await_status(*t, target, "live");
    await_converged(*t);
    t.reset();
  }

  static constexpr const char* kRing =
      "SELECT key FROM trellis.ring_0 UNION ALL SELECT key FROM trellis.ring_1 UNION ALL "
      "SELECT key FROM trellis.ring_2 UNION ALL SELECT key FROM trellis.ring_3";

  // Remembers what the ring holds now.
  void mark_ring() {
    sql(std::string("DROP TABLE IF EXISTS staged_before; CREATE TEMP TABLE staged_before AS ") +
        kRing);
  }

  // Keys staged since mark_ring(), sorted and joined ("{1004},{4}").
  std::string keys_staged_since_mark() {
    return query(std::string("SELECT coalesce(string_agg(key::text, ',' ORDER BY key::text), '') "
                             "FROM (") +
                 kRing + " EXCEPT ALL SELECT key FROM staged_before) k")
        .get(0, 0);
  }

  std::string keys_staged_by(const std::string& statement) {
    mark_ring();
    sql(statement);
    return keys_staged_since_mark();
  }
};

// An UPDATE stages a key only when a column some reader reads changed (as
// written, so 1 -> 1.00 counts), stages both keys when it moves a row to a
// new key, and stages each changed key once however many rows it touched.
TEST_F(Capture, UpdateStagesOnlyKeysWhoseReadColumnsChanged) {
  sql("CREATE TABLE src (id int PRIMARY KEY, a numeric, unread int);"
      "INSERT INTO src SELECT g, g, 0 FROM generate_series(1, 100) g");
  define_and_stop("TRANSFORM view1 FROM src SELECT a * 2 AS twice", "view1");

  EXPECT_EQ(keys_staged_by("UPDATE src SET unread = unread + 1"), "")
      << "a column no reader reads changed";
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = a WHERE id <= 50"), "") << "nothing changed";
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = 1.00 WHERE id = 1"), "{1}")
      << "1 -> 1.00 is a change as written";
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = a + 1 WHERE id IN (2, 3)"), "{2},{3}");
  EXPECT_EQ(keys_staged_by("UPDATE src SET id = 1004 WHERE id = 4"), "{1004},{4}")
      << "a moved row stages its old and its new key";
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = NULL WHERE id = 5"), "{5}");
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = NULL WHERE id = 5"), "") << "NULL to NULL";
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = 6, unread = 1 WHERE id BETWEEN 6 AND 7"), "{7}")
      << "row 6 already held 6";
}

// Each read column is compared as stored, whatever its type (by stored
// image: float -0 and 0, unconstrained numeric 1 and 1.0 differ).
TEST_F(Capture, UpdateComparesEachReadColumnAsStored) {
  sql("CREATE TABLE src (id int PRIMARY KEY, i int, s text, f float8, n numeric, m "
      "numeric(6,2));"
      "INSERT INTO src SELECT g, g, 'a', 0, 1, 1 FROM generate_series(1, 5) g");
  define_and_stop("TRANSFORM view1 FROM src SELECT i AS i, s AS s, f AS f, n AS n, m AS m",
                  "view1");

  EXPECT_EQ(keys_staged_by("UPDATE src SET i = i, s = s, f = f, n = n, m = m"), "");
  EXPECT_EQ(keys_staged_by("UPDATE src SET i = 10 WHERE id = 1"), "{1}");
  EXPECT_EQ(keys_staged_by("UPDATE src SET s = 'b' WHERE id = 2"), "{2}");
  EXPECT_EQ(keys_staged_by("UPDATE src SET f = '-0' WHERE id = 3"), "{3}") << "-0 is written apart";
  EXPECT_EQ(keys_staged_by("UPDATE src SET n = 1.0 WHERE id = 4"), "{4}") << "1 -> 1.0 as written";
  EXPECT_EQ(keys_staged_by("UPDATE src SET m = 1.0 WHERE id = 5"), "")
      << "numeric(6,2) stores 1.00 either way";
  EXPECT_EQ(keys_staged_by("UPDATE src SET s = NULL WHERE id = 5"), "{5}");
}

// A key whose text changes while it stays equal (numeric 1 -> 1.0) is a moved
// key: the row's old and new key are both staged, as for any other move.
TEST_F(Capture, UpdateOfAKeyToAnEqualValueWrittenDifferentlyStagesBothKeys) {
  sql("CREATE TABLE src (id numeric PRIMARY KEY, a int);"
      "INSERT INTO src SELECT g, g FROM generate_series(1, 10) g");
  define_and_stop("TRANSFORM view1 FROM src SELECT a AS a", "view1");

  EXPECT_EQ(keys_staged_by("UPDATE src SET id = 1.0 WHERE id = 1"), "{1.0},{1}");
  EXPECT_EQ(keys_staged_by("UPDATE src SET id = 2 WHERE id = 2"), "") << "same key, same text";
}

// Capture names the table's leading columns by their place, so renaming a
// column (the key too) leaves it reading the same columns: the application's
// writes succeed, in the transaction of the rename too, and stage exactly as
// before. (The drift check then pauses the readers of a renamed column.)
TEST_F(Capture, RenamedColumnsAreStillReadByTheirPlace) {
  sql("CREATE TABLE src (id int PRIMARY KEY, a numeric, b text);"
      "INSERT INTO src SELECT g, g, 'x' FROM generate_series(1, 10) g");
  define_and_stop("TRANSFORM view1 FROM src SELECT a * 2 AS twice, b AS b", "view1");

  EXPECT_EQ(keys_staged_by("BEGIN; ALTER TABLE src RENAME COLUMN a TO a2; "
                           "ALTER TABLE src RENAME COLUMN id TO id2; "
                           "UPDATE src SET a2 = 0 WHERE id2 = 1; COMMIT"),
            "{1}");
  EXPECT_EQ(keys_staged_by("UPDATE src SET a2 = a2 WHERE id2 = 2"), "") << "nothing changed";
  EXPECT_EQ(keys_staged_by("UPDATE src SET id2 = 1002 WHERE id2 = 2"), "{1002},{2}");
  EXPECT_EQ(keys_staged_by("INSERT INTO src VALUES (11, 11, 'x')"), "{11}");
  EXPECT_EQ(keys_staged_by("DELETE FROM src WHERE id2 = 3"), "{3}");
}

// A dropped column moves the places of the columns after it; capture
// notices that in the same statement and reads rows through jsonb instead,
// so the application's writes still succeed and stage what capture can still
// see by name: every insert and delete, an update of a column still there.
TEST_F(Capture, WritesStillSucceedAndStageAfterAColumnIsDropped) {
  sql("CREATE TABLE src (id int PRIMARY KEY, unread int, a numeric, b text);"
      "INSERT INTO src SELECT g, 0, g, 'x' FROM generate_series(1, 10) g");
  define_and_stop("TRANSFORM view1 FROM src SELECT a * 2 AS twice, b AS b", "view1");

  EXPECT_EQ(keys_staged_by("BEGIN; ALTER TABLE src DROP COLUMN unread; "
                           "UPDATE src SET b = 'y' WHERE id = 1; COMMIT"),
            "{1}");
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = 0 WHERE id = 2"), "{2}");
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = a WHERE id = 2"), "") << "nothing changed";
  EXPECT_EQ(keys_staged_by("INSERT INTO src VALUES (11, 11, 'x')"), "{11}");
  EXPECT_EQ(keys_staged_by("DELETE FROM src WHERE id = 3"), "{3}");

  sql("ALTER TABLE src DROP COLUMN b");
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = 5 WHERE id = 4"), "{4}");
  sql("ALTER TABLE src RENAME COLUMN id TO id2");
  EXPECT_EQ(keys_staged_by("INSERT INTO src VALUES (12, 12)"), "{12}")
      << "no column before the key was dropped: it is still read by its place";
  EXPECT_EQ(keys_staged_by("UPDATE src SET a = 6 WHERE id2 = 5"), "{NULL}")
      << "read by name, the key is gone: staged with a NULL element, which drains skip";
}

// After a drop that moved the columns capture reads, the drift check has
// capture reinstalled for the new layout, and the transform stays exact.
TEST_F(Capture, ADropOfAnUnreadColumnReinstallsCaptureAndTheTargetStaysExact) {
  sql("CREATE TABLE src (id int PRIMARY KEY, unread int, a numeric);"
      "INSERT INTO src SELECT g, 0, g FROM generate_series(1, 10) g");
  auto t = start();
  t->apply("TRANSFORM view1 FROM src SELECT a * 2 AS twice");
  await_status(*t, "view1", "live");
  auto layout = [&] {
    return query("SELECT installed_signature::jsonb -> 'layout' FROM trellis.captured_tables")
        .get(0, 0);
  };
  EXPECT_NE(layout().find("unread"), std::string::npos) << layout();

  sql("ALTER TABLE src DROP COLUMN unread");
  sql("UPDATE src SET a = a + 1 WHERE id <= 5");
  EXPECT_TRUE(eventually([&] { return layout().find("unread") == std::string::npos; },
                         std::chrono::seconds(30)))
      << layout();
  sql("UPDATE src SET a = a + 1 WHERE id > 5");
  await_converged(*t);
  EXPECT_EQ(query("SELECT status FROM trellis.transforms").get(0, 0), "live");
  expect_oracle("view1");
}

// The column check reads the catalog as it is now, not as a transaction's
// snapshot saw it: a REPEATABLE READ transaction whose snapshot predates a
// drop still writes (and stages) after it.
TEST_F(Capture, AWriteUnderASnapshotOlderThanADropStillSucceeds) {
  sql("CREATE TABLE src (id int PRIMARY KEY, unread int, a numeric, b text);"
      "INSERT INTO src SELECT g, 0, g, 'x' FROM generate_series(1, 10) g");
  define_and_stop("TRANSFORM view1 FROM src SELECT a * 2 AS twice, b AS b", "view1");

  mark_ring();
  auto writer = pg::Connection::open(url_, {.search_path = "public"});
  writer->exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
  writer->exec("SELECT 1");  // takes the snapshot, no lock on src
  sql("ALTER TABLE src DROP COLUMN unread");
  EXPECT_NO_THROW(writer->exec("UPDATE src SET b = 'y' WHERE id = 1"));
  EXPECT_NO_THROW(writer->exec("INSERT INTO src VALUES (11, 11, 'x')"));
  EXPECT_NO_THROW(writer->exec("DELETE FROM src WHERE id = 2"));
  writer->exec("COMMIT");
  EXPECT_EQ(keys_staged_since_mark(), "{11},{1},{2}");
}

// The capture functions run as their owner, so nothing the writer's
// search_path can put first may be called from them: with a schema that
// shadows the functions and operators their statements use ahead of
// pg_catalog, every write still succeeds and stages as usual.
TEST_F(Capture, AWritersSearchPathCannotShadowWhatTheTriggersCall) {
  sql("CREATE TABLE src (id int PRIMARY KEY, a numeric, b text, i int);"
      "INSERT INTO src SELECT g, g, 'x', g FROM generate_series(1, 10) g");
  define_and_stop("TRANSFORM view1 FROM src SELECT a * 2 AS twice, b AS b, i AS i", "view1");
  std::string evil =
      "CREATE SCHEMA evil; CREATE FUNCTION evil.called() RETURNS int LANGUAGE plpgsql AS $$ "
      "BEGIN RAISE EXCEPTION 'a function of schema evil was called'; END $$;";
  // name, operator or function, argument types, result
  const char* const shadows[][4] = {
      {"eq_ta", "=", "text[], text[]", "bool"},
      {"eq_n", "=", "numeric, numeric", "bool"},
      {"eq_i", "=", "integer, integer", "bool"},
      {"eq_t", "=", "text, text", "bool"},
      {"eq_li", "=", "bigint, integer", "bool"},
      {"mod_li", "%", "bigint, integer", "bigint"},
      {"mod_i", "%", "integer, integer", "integer"},
      {"and_i", "&", "integer, integer", "integer"},
      {"ne_b", "<>", "bigint, integer", "bool"},
      {"concat_t", "||", "text, text", "text"},
      {"hashtext", "", "text", "integer"},
      {"pg_sequence_last_value", "", "regclass", "bigint"},
      {"to_jsonb", "", "anyelement", "jsonb"},
      {"record_image_eq", "", "record, record", "bool"},
      {"has_column_privilege", "", "oid, smallint, text", "bool"},
  };
  for (const auto& sh : shadows) {
    evil += fmt::format(
        "CREATE FUNCTION evil.{}({}) RETURNS {} LANGUAGE plpgsql AS 'BEGIN RETURN "
        "evil.called()::{}; END';",
        sh[0], sh[2], sh[3], sh[3]);
    std::string args = sh[2];
    if (*sh[1])
      evil += fmt::format(
          "CREATE OPERATOR evil.{} (LEFTARG = {}, RIGHTARG = {}, FUNCTION = evil.{});", sh[1],
          args.substr(0, args.find(',')), args.substr(args.find(',') + 2), sh[0]);
  }
  // Types the bodies cast to, shadowed by domains whose check calls evil.
  for (const char* type : {"text", "int2", "int8", "regclass", "xid8"})
    evil += fmt::format(
        "CREATE DOMAIN evil.{0} AS pg_catalog.{0} CHECK (evil.called() IS NOT NULL);", type);
  sql(evil);

  mark_ring();
  auto writer = pg::Connection::open(url_, {.search_path = "evil, pg_catalog, public"});
  // The writer's own statements avoid = and % on the shadowed types.
  EXPECT_NO_THROW(writer->exec("UPDATE src SET b = 'y' WHERE id BETWEEN 1 AND 1"));
  EXPECT_NO_THROW(writer->exec("UPDATE src SET a = 0, i = 0 WHERE id BETWEEN 2 AND 2"));
  EXPECT_NO_THROW(writer->exec("INSERT INTO src VALUES (11, 11, 'x', 11)"));
  EXPECT_NO_THROW(writer->exec("DELETE FROM src WHERE id BETWEEN 3 AND 3"));
  EXPECT_EQ(keys_staged_since_mark(), "{11},{1},{2},{3}");
  // The path through jsonb images, taken once a column the functions name
  // by place is gone, is qualified the same way.
  sql("ALTER TABLE src DROP COLUMN i");
  mark_ring();
  EXPECT_NO_THROW(writer->exec("UPDATE src SET b = 'z' WHERE id BETWEEN 4 AND 4"));
  EXPECT_NO_THROW(writer->exec("INSERT INTO src VALUES (12, 12, 'x')"));
  EXPECT_NO_THROW(writer->exec("DELETE FROM src WHERE id BETWEEN 5 AND 5"));
  EXPECT_EQ(keys_staged_since_mark(), "{12},{4},{5}");
}

// Functions an earlier version installed (with a pinned search_path, under
// signature version 2) are replaced once by the current ones, without a
// rebuild: the transform stays live and keeps converging.
TEST_F(Capture, FunctionsAnEarlierVersionInstalledAreReplacedOnce) {
  sql("CREATE TABLE src (id int PRIMARY KEY, a int);"
      "INSERT INTO src SELECT g, g FROM generate_series(1, 10) g");
  define_and_stop("TRANSFORM view1 FROM src SELECT a AS a", "view1");
  const std::string pinned =
      "SELECT count(*) FROM pg_proc WHERE pronamespace = 'trellis'::regnamespace AND proname "
      "LIKE 'capture%' AND proconfig IS NOT NULL";
  for (const char* event : {"ins", "upd", "del", "trunc"})
    sql(fmt::format("ALTER FUNCTION trellis.capture_1_{}() SET search_path = pg_catalog, pg_temp",
                    event));
  sql("UPDATE trellis.captured_tables SET installed_signature = replace(installed_signature, "
      "'\"v\":3', '\"v\":2')");
  ASSERT_EQ(query(pinned).get(0, 0), "4");
  ASSERT_EQ(
      query("SELECT installed_signature::jsonb ->> 'v' FROM trellis.captured_tables").get(0, 0),
      "2");
  auto rows_done = [&] {
    return query("SELECT build_rows_done FROM trellis.transforms").get(0, 0);
  };
  std::string built = rows_done();

  auto t = start();
  EXPECT_TRUE(eventually([&] { return query(pinned).get(0, 0) == "0"; }))
      << "the functions of the earlier version are still in place";
  EXPECT_EQ(
      query("SELECT installed_signature::jsonb ->> 'v' FROM trellis.captured_tables").get(0, 0),
      "3");
  sql("UPDATE src SET a = 100 WHERE id = 1");
  await_converged(*t);
  EXPECT_EQ(t->status("view1")->status, "live");
  EXPECT_EQ(rows_done(), built) << "replacing the functions rebuilt the transform";
  expect_oracle("view1");
}

}  // namespace trellis::test
