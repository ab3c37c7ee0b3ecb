// Schema drift and disruption (docs/architecture.md, Lifecycle: pause on drift): the staging worker
// notices what the application did to a source, pauses exactly the readers
// with capture_failure (kind, table, columns, error), leaves every other
// transform live, never fails the application's writes, and after the
// documented fix RESUME brings the reader back to the oracle.
#include <thread>

#include "support/harness.hpp"

namespace trellis::test {

class Drift : public TrellisTest {
 protected:
  void SetUp() override {
    TrellisTest::SetUp();
    sql("CREATE TABLE src (id int PRIMARY KEY, v int, note text);"
        "INSERT INTO src SELECT g, g, 'n' || g FROM generate_series(1, 20) g;"
        "CREATE TABLE other (id int PRIMARY KEY, v int); INSERT INTO other VALUES (1, 1)");
    t_ = start(2);
    t_->apply("TRANSFORM reader FROM src SELECT v * 2 AS v2");
    t_->apply("TRANSFORM bystander FROM other SELECT v AS v");
    await_status(*t_, "reader", "live");
    await_status(*t_, "bystander", "live");
  }

  // Waits for the reader to be paused by drift; checks the bystander runs on.
  CaptureFailure await_drift(const std::string& kind) {
    await_status(*t_, "reader", "paused");
    auto s = t_->status("reader");
    EXPECT_TRUE(s->capture_failure);
    if (!s->capture_failure) return {};
    EXPECT_EQ(s->capture_failure->kind, kind) << s->capture_failure->error;
    EXPECT_EQ(s->capture_failure->table, "public.src");
    EXPECT_FALSE(s->capture_failure->detected_at.empty());
    sql("UPDATE other SET v = v + 1");
    await_converged(*t_);
    EXPECT_EQ(t_->status("bystander")->status, "live");
    expect_oracle("bystander");
    return *s->capture_failure;
  }

  void resume_to_oracle() {
    t_->apply("RESUME TRANSFORM reader");
    await_status(*t_, "reader", "live");
    EXPECT_FALSE(t_->status("reader")->capture_failure);
    await_converged(*t_);
    expect_oracle("reader");
  }

  std::unique_ptr<Trellis> t_;
};

TEST_F(Drift, RenamedReadColumnPausesTheReaderUntilRenamedBack) {
  sql("BEGIN; ALTER TABLE src RENAME COLUMN v TO value; UPDATE src SET value = 0 WHERE id = 1; "
      "COMMIT");  // a write in the same transaction as the rename succeeds
  auto f = await_drift("capture");
  EXPECT_EQ(f.columns, (std::vector<std::string>{"v"}));
  EXPECT_NE(f.error.find("renamed or dropped"), std::string::npos) << f.error;
  sql("INSERT INTO src VALUES (21, 21, 'x')");  // writes keep succeeding
  try {
    t_->apply("RESUME TRANSFORM reader");
    ADD_FAILURE() << "RESUME succeeded while the column is missing";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::validation);
  }
  sql("ALTER TABLE src RENAME COLUMN value TO v");
  resume_to_oracle();
}

TEST_F(Drift, RetypedReadColumnPausesTheReader) {
  sql("ALTER TABLE src ALTER COLUMN v TYPE bigint");
  auto f = await_drift("capture");
  EXPECT_NE(f.error.find("retyped from integer to bigint"), std::string::npos) << f.error;
  resume_to_oracle();  // the definition is valid over bigint too: RESUME rebuilds
}

TEST_F(Drift, DroppedPrimaryKeyPausesTheReader) {
  sql("ALTER TABLE src DROP CONSTRAINT src_pkey");
  auto f = await_drift("capture");
  EXPECT_EQ(f.columns, (std::vector<std::string>{"id"}));
  sql("ALTER TABLE src ADD PRIMARY KEY (id)");
  resume_to_oracle();
}

TEST_F(Drift, DisabledTriggersAreADisruptionAndResumeRebuilds) {
  sql("ALTER TABLE src DISABLE TRIGGER ALL;"
      "UPDATE src SET v = v + 100 WHERE id <= 5;"  // a bulk load capture does not see
      "ALTER TABLE src ENABLE TRIGGER ALL");
  auto f = await_drift("disruption");
  EXPECT_NE(f.error.find("disabled or dropped"), std::string::npos) << f.error;
  resume_to_oracle();  // reinstalls capture and rebuilds: the missed rows are there
  sql("UPDATE src SET v = 0 WHERE id = 7");
  await_converged(*t_);
  expect_oracle("reader");
}

TEST_F(Drift, ReplacedCaptureFunctionIsADisruptionAndResumeReinstalls) {
  auto fn = query(
                "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = "
                "p.pronamespace WHERE n.nspname = 'trellis' AND p.proname LIKE 'capture\\_%' "
                "ORDER BY p.proname LIMIT 1")
                .get(0, 0);
  sql("CREATE OR REPLACE FUNCTION " + fn +
      " RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NULL; END$$;"
      "UPDATE src SET v = v + 100; DELETE FROM src WHERE id = 3; INSERT INTO src VALUES (99, 1, "
      "'x')");
  auto f = await_drift("disruption");
  EXPECT_NE(f.error.find("trigger function of public.src was replaced"), std::string::npos)
      << f.error;
  resume_to_oracle();  // capture reinstalled, target rebuilt with what was missed
  sql("UPDATE src SET v = 5 WHERE id = 99");
  await_converged(*t_);
  expect_oracle("reader");
}

TEST_F(Drift, TableReplacedByAnotherOfTheSameNameIsADisruption) {
  sql("ALTER TABLE src RENAME TO src_old;"
      "CREATE TABLE src (id int PRIMARY KEY, v int, note text);"
      "INSERT INTO src VALUES (1, 100, 'new')");
  auto f = await_drift("disruption");
  EXPECT_NE(f.error.find("replaced"), std::string::npos) << f.error;
  resume_to_oracle();  // rebuilt from the new table
  EXPECT_EQ(query("SELECT count(*) FROM reader").get_int(0, 0), 1);
}

TEST_F(Drift, DroppedTableIsADisruptionAndResumeRefusesUntilItIsBack) {
  sql("DROP TABLE src");
  auto f = await_drift("disruption");
  EXPECT_NE(f.error.find("dropped or renamed"), std::string::npos) << f.error;
  EXPECT_THROW(t_->apply("RESUME TRANSFORM reader"), Error);
  sql("CREATE TABLE src (id int PRIMARY KEY, v int, note text); INSERT INTO src VALUES (5, 5, '')");
  resume_to_oracle();
}

}  // namespace trellis::test

namespace trellis::test {

// A catalog-only widening of read columns (varchar(10) -> varchar(40),
// numeric(8,2) -> numeric(12,2)) is followed in place: the 1-1 target's
// copies and an aggregate's ledger copy are widened, nothing is paused or
// rebuilt, and values only the wider types hold then flow through.
class Widening : public TrellisTest {};

TEST_F(Widening, CatalogOnlyWideningIsAppliedInPlaceWithoutAPause) {
  sql("CREATE TABLE wd (id int PRIMARY KEY, name varchar(10), amount numeric(8,2), g int);"
      "CREATE INDEX ON wd (g);"
      "INSERT INTO wd SELECT x, 'n' || x, x * 1.25, x % 3 FROM generate_series(1, 30) x");
  auto t = start(2);
  t->apply("TRANSFORM wd_t FROM wd SELECT name AS nm, amount AS a, upper(name) AS un");
  t->apply("TRANSFORM wd_g FROM wd GROUP BY g SELECT MAX(name) AS mx, COUNT(*) AS n");
  await_status(*t, "wd_t", "live");
  await_status(*t, "wd_g", "live");
  auto type_of = [&](const std::string& table, const std::string& column) {
    return query("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = '" +
                 table + "'::regclass AND attname = '" + column + "'")
        .get(0, 0);
  };
  ASSERT_EQ(type_of("wd_t", "nm"), "character varying(10)");
  ASSERT_EQ(type_of("wd_g__ledger", "name"), "character varying(10)");

  // A row only the wider type holds, written with the retype: its change may
  // fail for the narrower copy (and be charged, even held) until Trellis has
  // followed the widening; it must arrive in the end all the same.
  sql("BEGIN; ALTER TABLE wd ALTER COLUMN name TYPE varchar(40), ALTER COLUMN amount TYPE "
      "numeric(12,2); INSERT INTO wd VALUES (101, 'written with the retype', 1, 2); COMMIT");
  bool paused = false;
  ASSERT_TRUE(eventually(
      [&] {
        paused = paused || t->status("wd_t")->status == "paused" ||
                 t->status("wd_g")->status == "paused";
        return type_of("wd_t", "nm") == "character varying(40)" &&
               type_of("wd_t", "a") == "numeric(12,2)" &&
               type_of("wd_g__ledger", "name") == "character varying(40)";
      },
      std::chrono::seconds(30)))
      << "target " << type_of("wd_t", "nm") << " ledger " << type_of("wd_g__ledger", "name");
  EXPECT_FALSE(paused);
  EXPECT_EQ(type_of("wd_t", "un"), "text");  // not a copy: untouched

  sql("INSERT INTO wd VALUES (100, 'a name longer than ten', 1234567.89, 1);"
      "UPDATE wd SET name = 'zzzzzzzzzzzzzzzzzzzzzzzz' WHERE id = 2");
  await_status(*t, "wd_t", "live");  // a rebuild if row 101 was held meanwhile
  await_status(*t, "wd_g", "live");
  await_converged(*t);
  for (const char* target : {"wd_t", "wd_g"}) {
    auto s = t->status(target);
    EXPECT_EQ(s->status, "live") << target;
    EXPECT_FALSE(s->capture_failure) << target;
    EXPECT_FALSE(s->held_keys) << target;
  }
  EXPECT_EQ(query("SELECT nm || '|' || a FROM wd_t WHERE id = 100").get(0, 0),
            "a name longer than ten|1234567.89");
  EXPECT_EQ(query("SELECT nm FROM wd_t WHERE id = 101").get(0, 0), "written with the retype");
  expect_oracle("wd_t");
  expect_oracle("wd_g");
}

}  // namespace trellis::test
