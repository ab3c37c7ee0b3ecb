// PAUSE / RESUME TRANSFORM t.col (docs/architecture.md, Lifecycle): one field of a 1-1 target keeps
// its last values while the other fields and every other transform keep
// flowing; transforms reading the frozen field report `catching_up` and name
// it in `paused_upstream_columns`; RESUME of the column rebuilds just that
// field and everything matches its definition again.
#include "support/harness.hpp"

namespace trellis::test {

class ColumnPause : public TrellisTest {
 protected:
  void SetUp() override {
    TrellisTest::SetUp();
    sql("CREATE TABLE cp (id int PRIMARY KEY, a int, b text, g int); CREATE INDEX ON cp (g);"
        "INSERT INTO cp SELECT x, x, 'b' || x, x % 2 FROM generate_series(1, 100) x");
    t_ = start(2);
    t_->apply("TRANSFORM cp_t FROM cp SELECT a * 10 AS a10, upper(b) AS ub");
    await_status(*t_, "cp_t", "live");
    t_->apply("TRANSFORM cp_down FROM cp_t SELECT a10 + 1 AS a11");
    t_->apply("TRANSFORM cp_other FROM cp_t SELECT lower(ub) AS lb");
    t_->apply("TRANSFORM cp_g FROM cp GROUP BY g SELECT SUM(a) AS s");
    for (const char* target : {"cp_down", "cp_other", "cp_g"}) await_status(*t_, target, "live");
  }
  std::string row(int id) {
    auto r = query("SELECT coalesce(a10::text, 'NULL') || '|' || ub FROM cp_t WHERE id = " +
                   std::to_string(id));
    return r.rows() ? r.get(0, 0) : "absent";
  }
  std::unique_ptr<Trellis> t_;
};

TEST_F(ColumnPause, FreezesOneFieldAndResumeRebuildsIt) {
  auto paused = t_->apply("PAUSE TRANSFORM cp_t.a10");
  EXPECT_EQ(paused.kind, "pause");
  EXPECT_EQ(paused.target, "public.cp_t.a10");
  EXPECT_EQ(t_->apply("PAUSE TRANSFORM cp_t.a10").target, "public.cp_t.a10");  // idempotent

  sql("UPDATE cp SET a = a + 1000, b = b || 'x' WHERE id <= 10;"
      "INSERT INTO cp VALUES (500, 5, 'new', 0); DELETE FROM cp WHERE id = 50");
  await_converged(*t_);
  EXPECT_EQ(row(1), "10|B1X");  // a10 frozen, ub flows
  EXPECT_EQ(row(10), "100|B10X");
  EXPECT_EQ(row(11), "110|B11");
  EXPECT_EQ(row(500), "NULL|NEW");  // a new row has no last value for the frozen field
  EXPECT_EQ(row(50), "absent");     // rows still come and go

  auto own = t_->status("cp_t");
  EXPECT_EQ(own->status, "live");
  ASSERT_EQ(own->paused_columns.size(), 1u);
  EXPECT_EQ(own->paused_columns[0].column, "a10");
  EXPECT_EQ(own->paused_columns[0].cause, "operator");
  EXPECT_FALSE(own->paused_columns[0].since.empty());
  EXPECT_EQ(own->paused_columns[0].error, "");
  auto down = t_->status("cp_down");
  EXPECT_EQ(down->status, "catching_up");
  EXPECT_EQ(down->paused_upstream_columns, std::vector<std::string>{"public.cp_t.a10"});
  auto other = t_->status("cp_other");  // reads only the flowing field
  EXPECT_EQ(other->status, "live");
  EXPECT_TRUE(other->paused_upstream_columns.empty());
  expect_oracle("cp_other");
  expect_oracle("cp_g");

  auto resumed = t_->apply("RESUME TRANSFORM cp_t.a10");
  EXPECT_EQ(resumed.kind, "resume");
  EXPECT_EQ(resumed.status, "backfilling");
  await_status(*t_, "cp_t", "live");
  await_status(*t_, "cp_down", "live");
  await_converged(*t_);
  EXPECT_EQ(row(1), "10010|B1X");
  EXPECT_EQ(row(500), "50|NEW");
  EXPECT_TRUE(t_->status("cp_t")->paused_columns.empty());
  EXPECT_TRUE(t_->status("cp_down")->paused_upstream_columns.empty());
  for (const char* target : {"cp_t", "cp_down", "cp_other", "cp_g"}) expect_oracle(target);
}

TEST_F(ColumnPause, RefusesWhatIsNotAPausableColumn) {
  auto code_of = [&](const std::string& statement) {
    try {
      t_->apply(statement);
      return std::string("applied");
    } catch (const Error& e) {
      return std::string(to_string(e.code())) + ": " + e.what();
    }
  };
  EXPECT_NE(code_of("PAUSE TRANSFORM cp_g.s")
                .find("validation: PAUSE TRANSFORM of one column "
                      "works on 1-1 transforms"),
            std::string::npos);
  EXPECT_NE(code_of("PAUSE TRANSFORM cp_t.nope")
                .find("not_found: transform public.cp_t has no "
                      "field \"nope\""),
            std::string::npos);
  EXPECT_NE(code_of("RESUME TRANSFORM cp_t.ub")
                .find("validation: column public.cp_t.ub is not "
                      "paused"),
            std::string::npos);
  EXPECT_EQ(t_->status("cp_t")->status, "live");
}

// ALTER that drops a paused field forgets the pause; the whole-transform
// RESUME of a paused transform rebuilds every field, paused ones included.
TEST_F(ColumnPause, DroppingAPausedFieldForgetsThePause) {
  t_->apply("PAUSE TRANSFORM cp_other.lb");
  ASSERT_EQ(t_->status("cp_other")->paused_columns.size(), 1u);
  EXPECT_EQ(t_->status("cp_other")->paused_columns[0].column, "lb");
  t_->apply("ALTER TRANSFORM cp_other DROP lb, ADD ub AS same");
  EXPECT_TRUE(t_->status("cp_other")->paused_columns.empty());
  await_status(*t_, "cp_other", "live");
  await_converged(*t_);
  expect_oracle("cp_other");
}

}  // namespace trellis::test
