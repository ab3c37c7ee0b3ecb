// Quarantine (docs/architecture.md, Failures): a key whose re-derive fails with a data
// error — an overflow, a division by zero, a failing cast, a CHECK on the
// target — is charged, held after 5 charges while every other key keeps
// flowing (in the build and in the drain), blocks the tokens that cover it,
// is listed by sample_quarantined and re-derived by release_key once fixed;
// 5 held keys trip the fuse, and RESUME re-arms it and rebuilds.
#include <thread>

#include "support/harness.hpp"

namespace trellis::test {

class Quarantine : public TrellisTest {
 protected:
  // Waits until `target` holds exactly `count` keys; returns its status.
  Status await_held(Trellis& t, const std::string& target, int64_t count) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::optional<Status> s;
    while (std::chrono::steady_clock::now() < deadline) {
      s = t.status(target);
      if (s && (s->held_keys ? s->held_keys->count : 0) == count) return *s;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << target << " never held " << count << " keys";
    return s.value_or(Status{});
  }

  std::vector<std::string> held_keys(Trellis& t, const std::string& target) {
    std::vector<std::string> out;
    for (const auto& k : t.sample_quarantined(target, 100).keys) out.push_back(k.key);
    return out;
  }

  // Rows in which `actual` and `expected` (SELECTs of the same columns) differ.
  int64_t differing(const std::string& actual, const std::string& expected) {
    return query("SELECT count(*) FROM ((" + actual + " EXCEPT ALL " + expected + ") UNION ALL (" +
                 expected + " EXCEPT ALL " + actual + ")) d")
        .get_int(0, 0);
  }
};

TEST_F(Quarantine, OverflowInTheBuildHoldsOnlyThoseKeysUntilReleased) {
  sql("CREATE TABLE src (id int PRIMARY KEY, n int);"
      "INSERT INTO src SELECT g, g FROM generate_series(1, 200) g;"
      "UPDATE src SET n = 2000000000 WHERE id IN (30, 170)");
  auto t = start(2);
  t->apply("TRANSFORM dbl FROM src SELECT n + n AS twice");
  await_status(*t, "dbl", "live");
  auto s = await_held(*t, "dbl", 2);
  EXPECT_EQ(s.status, "live");
  EXPECT_FALSE(s.held_keys->oldest.empty());
  EXPECT_FALSE(s.backfill_failure);
  EXPECT_EQ(held_keys(*t, "dbl"), (std::vector<std::string>{"[\"170\"]", "[\"30\"]"}));
  auto page = t->sample_quarantined("dbl", 10);
  ASSERT_EQ(page.keys.size(), 2u);
  EXPECT_EQ(page.keys[0].table, "public.src");
  EXPECT_EQ(page.keys[0].sqlstate, "22003");
  EXPECT_NE(page.keys[0].error.find("out of range"), std::string::npos);
  EXPECT_EQ(page.keys[0].charges, 5);
  // Every other key is built; the held ones have no row.
  EXPECT_EQ(differing("TABLE dbl", "SELECT id, n + n FROM src WHERE id NOT IN (30, 170)"), 0);

  // Other keys keep flowing; the held key's own change is held back.
  sql("UPDATE src SET n = n + 1 WHERE id IN (1, 30, 199)");
  sql("UPDATE src SET n = 5 WHERE id = 170");
  EXPECT_FALSE(t->await_converged(t->watermark_token(), std::chrono::milliseconds(300)));
  EXPECT_EQ(query("SELECT twice FROM dbl WHERE id = 199").get_int(0, 0), 400);
  EXPECT_EQ(query("SELECT count(*) FROM dbl WHERE id = 170").get_int(0, 0), 0);

  // A release while the cause is still there fails and keeps the key held.
  try {
    t->release_key("dbl", "src", "[\"30\"]");
    ADD_FAILURE() << "release of a still failing key succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::conflict);
    EXPECT_NE(std::string(e.what()).find("still fails"), std::string::npos) << e.what();
  }
  EXPECT_THROW(t->release_key("dbl", "src", "[\"31\"]"), Error);  // not held
  t->release_key("dbl", "src", "170");                            // fixed: a bare value works
  sql("UPDATE src SET n = 7 WHERE id = 30");
  t->release_key("dbl", "public.src", "[\"30\"]");
  await_held(*t, "dbl", 0);
  EXPECT_TRUE(t->sample_quarantined("dbl", 10).keys.empty());
  await_converged(*t);
  expect_oracle("dbl");
}

TEST_F(Quarantine, LiveDataErrorsHoldTheirKeysWhileTheSamePagesOtherKeysApply) {
  sql("CREATE TABLE src (id int PRIMARY KEY, d int, t text);"
      "INSERT INTO src SELECT g, 1, g::text FROM generate_series(1, 20) g");
  auto t = start(2);
  t->apply("TRANSFORM inv FROM src SELECT 100 / d AS q, t::int AS parsed");
  await_status(*t, "inv", "live");
  // One transaction (one page): a division by zero, a failing cast and
  // three good rows.
  sql("BEGIN; INSERT INTO src VALUES (21, 0, '21'), (22, 1, 'x22'), (23, 4, '23'), (24, 5, '24');"
      "UPDATE src SET d = 2 WHERE id = 1; COMMIT");
  auto s = await_held(*t, "inv", 2);
  EXPECT_EQ(s.status, "live");
  EXPECT_FALSE(s.drain_failure);
  EXPECT_EQ(held_keys(*t, "inv"), (std::vector<std::string>{"[\"21\"]", "[\"22\"]"}));
  EXPECT_FALSE(t->await_converged(t->watermark_token(), std::chrono::milliseconds(300)));
  EXPECT_EQ(differing("TABLE inv", "SELECT id, 100 / d, t::int FROM src WHERE id NOT IN (21, 22)"),
            0);
  sql("UPDATE src SET d = 3 WHERE id = 21; UPDATE src SET t = '22' WHERE id = 22");
  t->release_key("inv", "src", "[\"21\"]");
  t->release_key("inv", "src", "[\"22\"]");
  await_converged(*t);
  expect_oracle("inv");
}

TEST_F(Quarantine, TargetCheckConstraintHoldsTheViolatingKeys) {
  sql("CREATE TABLE src (id int PRIMARY KEY, v int);"
      "INSERT INTO src SELECT g, g FROM generate_series(1, 10) g");
  auto t = start(1);
  t->apply("TRANSFORM small FROM src SELECT v * 10 AS v10");
  await_status(*t, "small", "live");
  sql("ALTER TABLE small ADD CONSTRAINT small_cap CHECK (v10 < 500)");
  sql("UPDATE src SET v = v + 50 WHERE id IN (2, 3)");  // 520 and 530 break the CHECK
  sql("UPDATE src SET v = 1 WHERE id = 9");
  await_held(*t, "small", 2);
  auto page = t->sample_quarantined("small", 10);
  ASSERT_EQ(page.keys.size(), 2u);
  EXPECT_EQ(page.keys[0].sqlstate, "23514");
  // The held rows keep their old values; the rest move on (the page goes on
  // without the held keys right after their charge commits).
  EXPECT_EQ(query("SELECT v10 FROM small WHERE id = 2").get_int(0, 0), 20);
  EXPECT_TRUE(eventually([&] {
    return query("SELECT v10 FROM small WHERE id = 9").get_int(0, 0) == 10;
  })) << "the page did not go on without the held keys";
  sql("ALTER TABLE small DROP CONSTRAINT small_cap");
  t->release_key("small", "src", "[\"2\"]");
  t->release_key("small", "src", "[\"3\"]");
  await_converged(*t);
  expect_oracle("small");
}

// Failures not narrowed to one field (here the WHERE divides by zero) count
// toward the transform's fuse.
TEST_F(Quarantine, FiveHeldKeysTripTheFuseAndResumeRebuilds) {
  sql("CREATE TABLE src (id int PRIMARY KEY, d int);"
      "INSERT INTO src SELECT g, 1 FROM generate_series(1, 30) g;"
      "CREATE TABLE other (id int PRIMARY KEY, v int); INSERT INTO other VALUES (1, 1)");
  auto t = start(2);
  t->apply("TRANSFORM inv FROM src SELECT d AS dd WHERE 10 / d > 0");
  t->apply("TRANSFORM copy FROM other SELECT v AS v");
  await_status(*t, "inv", "live");
  await_status(*t, "copy", "live");
  sql("UPDATE src SET d = 0 WHERE id <= 6");
  await_status(*t, "inv", "quarantined");
  auto s = t->status("inv");
  ASSERT_TRUE(s->held_keys);
  EXPECT_GE(s->held_keys->count, 5);
  // Nothing else is paused: the other transform still moves.
  sql("UPDATE other SET v = 2");
  await_converged(*t);
  EXPECT_EQ(query("SELECT v FROM copy").get_int(0, 0), 2);
  EXPECT_EQ(t->status("copy")->status, "live");
  // Fix the data; RESUME re-arms the fuse and rebuilds every key.
  sql("UPDATE src SET d = 2 WHERE id <= 6");
  t->apply("RESUME TRANSFORM inv");
  await_status(*t, "inv", "live");
  EXPECT_FALSE(t->status("inv")->held_keys);
  await_converged(*t);
  expect_oracle("inv");
}

// A 1-1 field failing on 5 distinct rows is paused alone (the column fuse):
// the transform is rebuilt without it, every other field flows for every
// row, the failing rows stay listed under "target.field", and RESUME of the
// field rebuilds it once the data is fixed.
TEST_F(Quarantine, FiveKeysFailingInOneFieldPauseJustThatField) {
  sql("CREATE TABLE src (id int PRIMARY KEY, d int);"
      "INSERT INTO src SELECT g, 1 FROM generate_series(1, 30) g");
  auto t = start(2);
  t->apply("TRANSFORM inv FROM src SELECT 10 / d AS q, d + 1 AS d1");
  await_status(*t, "inv", "live");
  sql("UPDATE src SET d = 0 WHERE id <= 6");
  ASSERT_TRUE(eventually([&] { return !t->status("inv")->paused_columns.empty(); },
                         std::chrono::seconds(60)));
  await_status(*t, "inv", "live");
  await_converged(*t);
  auto s = t->status("inv");
  ASSERT_EQ(s->paused_columns.size(), 1u);
  EXPECT_EQ(s->paused_columns[0].column, "q");
  EXPECT_EQ(s->paused_columns[0].cause, "quarantine");  // the column fuse, with its error
  EXPECT_EQ(s->paused_columns[0].sqlstate, "22012");
  EXPECT_NE(s->paused_columns[0].error.find("division by zero"), std::string::npos);
  EXPECT_FALSE(s->held_keys);  // nothing held: the field is paused instead
  EXPECT_FALSE(s->capture_failure);
  // The other field flows for every row, failing ones included.
  EXPECT_EQ(differing("SELECT id, d1 FROM inv", "SELECT id, d + 1 FROM src"), 0);
  auto failing = t->sample_quarantined("inv.q", 100);
  EXPECT_GE(failing.keys.size(), 5u);
  for (const auto& k : failing.keys) {
    EXPECT_EQ(k.sqlstate, "22012");
    EXPECT_NE(k.error.find("division by zero"), std::string::npos);
  }
  EXPECT_TRUE(t->sample_quarantined("inv", 100).keys.empty());
  EXPECT_EQ(t->sample_quarantined("public.inv.q", 100).keys.size(), failing.keys.size());
  sql("UPDATE src SET d = 5 WHERE id <= 6");
  t->apply("RESUME TRANSFORM inv.q");
  await_status(*t, "inv", "live");
  await_converged(*t);
  EXPECT_TRUE(t->status("inv")->paused_columns.empty());
  EXPECT_TRUE(t->sample_quarantined("inv.q", 100).keys.empty());
  expect_oracle("inv");
}

TEST_F(Quarantine, AggregateKeyIsHeldAndItsGroupKeepsTheRest) {
  sql("CREATE TABLE src (id int PRIMARY KEY, g int, d int); CREATE INDEX ON src (g);"
      "INSERT INTO src SELECT x, x % 3, 1 FROM generate_series(1, 30) x");
  auto t = start(2);
  t->apply("TRANSFORM agg FROM src GROUP BY g SELECT COUNT(*) AS n, SUM(100 / d) AS s");
  await_status(*t, "agg", "live");
  sql("INSERT INTO src VALUES (31, 1, 0), (32, 1, 5), (33, 2, 4)");
  await_held(*t, "agg", 1);
  EXPECT_EQ(held_keys(*t, "agg"), (std::vector<std::string>{"[\"31\"]"}));
  // The charge commits before the page goes on without the held key.
  EXPECT_TRUE(eventually([&] {
    return differing("SELECT g, n, s FROM agg",
                     "SELECT g, count(*), sum(100 / d) FROM src WHERE id <> 31 GROUP BY g") == 0;
  })) << "the group of the held key did not keep its other rows";
  sql("UPDATE src SET d = 10 WHERE id = 31");
  t->release_key("agg", "src", "31");
  await_converged(*t);
  expect_oracle("agg");
}

TEST_F(Quarantine, SampleQuarantinedPagesWithAnOpaqueCursor) {
  sql("CREATE TABLE src (id int PRIMARY KEY, d int);"
      "INSERT INTO src SELECT g, 1 FROM generate_series(1, 10) g");
  auto t = start(1);
  t->apply("TRANSFORM inv FROM src SELECT 10 / d AS q");
  await_status(*t, "inv", "live");
  sql("UPDATE src SET d = 0 WHERE id IN (2, 4, 6)");
  await_held(*t, "inv", 3);
  auto first = t->sample_quarantined("inv", 2);
  ASSERT_EQ(first.keys.size(), 2u);
  auto second = t->sample_quarantined("inv", 2, first.cursor);
  ASSERT_EQ(second.keys.size(), 1u);
  EXPECT_EQ(second.keys[0].key, "[\"6\"]");
  auto empty = t->sample_quarantined("inv", 2, second.cursor);
  EXPECT_TRUE(empty.keys.empty());
  EXPECT_EQ(empty.cursor, second.cursor);
  EXPECT_THROW(t->sample_quarantined("nope", 2), Error);
}

}  // namespace trellis::test
