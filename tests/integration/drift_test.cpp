// Schema drift and disruption (SPEC §3 automatic pauses): the staging worker
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
