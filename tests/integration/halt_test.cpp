// Halts (docs/architecture.md, Failures: capture_failure kind `halt`): when the drain cannot get
// past a failure no retry fixes — here Trellis's role losing SELECT on a source — the transform
// behind it is paused with everything that reads its target, the application's writes keep
// succeeding, other transforms stay live, and after the grant is restored RESUME brings both back
// to the oracle.
#include <fmt/format.h>

#include "support/harness.hpp"

namespace trellis::test {

namespace {

constexpr const char* kRole = "trellis_halt_runner";

}  // namespace

class Halt : public TrellisTest {
 protected:
  void SetUp() override {
    TrellisTest::SetUp();
    ensure_login_role(kRole);
    std::string db = query("SELECT current_database()").get(0, 0);
    sql(fmt::format("GRANT CREATE ON DATABASE \"{}\" TO {}; GRANT CREATE ON SCHEMA public TO {}",
                    db, kRole, kRole));
    sql("CREATE TABLE hs (id int PRIMARY KEY, v int); CREATE TABLE other (id int PRIMARY KEY, v "
        "int); INSERT INTO hs SELECT g, g FROM generate_series(1, 50) g; INSERT INTO other VALUES "
        "(1, 1)");
    sql(fmt::format("ALTER TABLE hs OWNER TO {0}; ALTER TABLE other OWNER TO {0}", kRole));
  }
  std::unique_ptr<Trellis> start_as_role(int drain_threads = 2, bool staging = true) {
    Options o = options(drain_threads, staging);
    o.url = url_as(kRole);
    return Trellis::connect(o);
  }
};

TEST_F(Halt, RevokedSelectOnASourceHaltsItsReaderAndWhatReadsThat) {
  auto t = start_as_role();
  t->apply("TRANSFORM hs_t FROM hs SELECT v * 2 AS v2");
  t->apply("TRANSFORM other_t FROM other SELECT v AS v");
  await_status(*t, "hs_t", "live");
  t->apply("TRANSFORM hs_down FROM hs_t SELECT v2 + 1 AS v3");
  await_status(*t, "hs_down", "live");
  await_status(*t, "other_t", "live");

  sql(fmt::format("REVOKE SELECT ON hs FROM {}", kRole));
  sql("UPDATE hs SET v = v + 100 WHERE id <= 10");  // the application's write succeeds
  await_status(*t, "hs_t", "paused");
  await_status(*t, "hs_down", "paused");
  auto halted = t->status("hs_t");
  ASSERT_TRUE(halted->capture_failure);
  EXPECT_EQ(halted->capture_failure->kind, "halt");
  EXPECT_EQ(halted->capture_failure->table, "public.hs");
  EXPECT_NE(halted->capture_failure->error.find("permission denied"), std::string::npos)
      << halted->capture_failure->error;
  EXPECT_FALSE(halted->capture_failure->detected_at.empty());
  auto down = t->status("hs_down");
  ASSERT_TRUE(down->capture_failure);
  EXPECT_EQ(down->capture_failure->kind, "halt");
  EXPECT_EQ(down->capture_failure->table, "public.hs_t");
  EXPECT_NE(down->capture_failure->error.find("upstream transform public.hs_t halted"),
            std::string::npos)
      << down->capture_failure->error;
  EXPECT_FALSE(halted->drain_failure);
  for (const auto& d : t->definitions()) {  // definitions() carry the halt too
    if (d.target == "public.other_t") {
      EXPECT_FALSE(d.halt);
    } else {
      ASSERT_TRUE(d.halt) << d.target;
      EXPECT_EQ(d.status, "paused");
    }
  }

  // Everything else keeps flowing.
  sql("UPDATE other SET v = 42; INSERT INTO hs VALUES (51, 51)");
  await_converged(*t);
  EXPECT_EQ(t->status("other_t")->status, "live");
  expect_oracle("other_t");

  // RESUME refuses nothing here (define would accept), but the drain would
  // halt again; the documented fix is to restore the grant first.
  sql(fmt::format("GRANT SELECT ON hs TO {}", kRole));
  t->apply("RESUME TRANSFORM hs_t");
  await_status(*t, "hs_t", "live");
  t->apply("RESUME TRANSFORM hs_down");
  await_status(*t, "hs_down", "live");
  EXPECT_FALSE(t->status("hs_t")->capture_failure);
  await_converged(*t);
  expect_oracle("hs_t");
  expect_oracle("hs_down");
}

// A build chunk refused for lack of a privilege halts the transform too,
// instead of retrying forever as a backfill failure.
TEST_F(Halt, RevokedPrivilegeOnTheTargetHaltsItsBuild) {
  {
    auto registering = start_as_role(0, false);  // defines only: nothing builds yet
    registering->apply("TRANSFORM hs_t FROM hs SELECT v * 2 AS v2");
  }
  sql(fmt::format("REVOKE UPDATE ON hs_t FROM {}", kRole));
  auto t = start_as_role();
  await_status(*t, "hs_t", "paused");
  auto s = t->status("hs_t");
  ASSERT_TRUE(s->capture_failure);
  EXPECT_EQ(s->capture_failure->kind, "halt");
  EXPECT_NE(s->capture_failure->error.find("permission denied"), std::string::npos)
      << s->capture_failure->error;
  EXPECT_FALSE(s->backfill_failure);
  sql("UPDATE hs SET v = v + 1 WHERE id = 3");  // writes keep succeeding
  sql(fmt::format("GRANT UPDATE ON hs_t TO {}", kRole));
  t->apply("RESUME TRANSFORM hs_t");
  await_status(*t, "hs_t", "live");
  await_converged(*t);
  expect_oracle("hs_t");
}

}  // namespace trellis::test
