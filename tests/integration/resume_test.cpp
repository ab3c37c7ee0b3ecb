// RESUME TRANSFORM of a chain (docs/architecture.md, Lifecycle): a reader resumed together with its
// upstream (as after a halt, which pauses both) is accepted even though the
// upstream is not live yet. It waits at waiting_to_backfill, its status names
// the upstream and that one's status in `upstream_waits`, and it builds and
// goes live on its own once the upstream is live. A new TRANSFORM over a
// target that is not live is still refused.
#include <string>

#include "support/harness.hpp"

namespace trellis::test {

class Resume : public TrellisTest {
 protected:
  void SetUp() override {
    TrellisTest::SetUp();
    sql("CREATE TABLE s1 (id int PRIMARY KEY, v1 int); CREATE TABLE s2 (id int PRIMARY KEY, v "
        "int); INSERT INTO s1 SELECT g, g FROM generate_series(1, 200) g; INSERT INTO s2 VALUES "
        "(1, 1), (2, 2)");
  }

  // d0 over s1, d1 over d0's target, o over s2 (unrelated), all live.
  void define_chain(Trellis& t) {
    t.apply("TRANSFORM d0 FROM s1 SELECT v1 % 7 AS f0_0");
    t.apply("TRANSFORM o FROM s2 SELECT v * 3 AS v3");
    await_status(t, "d0", "live");
    t.apply("TRANSFORM d1 FROM d0 SELECT f0_0::bigint + 1 AS f1_0");
    await_status(t, "d1", "live");
    await_status(t, "o", "live");
  }

  // Source writes while everything is paused (none of them reaches a target).
  void write_while_paused() {
    sql("UPDATE s1 SET v1 = v1 + 3 WHERE id <= 50; DELETE FROM s1 WHERE id > 190; INSERT INTO s1 "
        "SELECT g, g * 5 FROM generate_series(201, 230) g; UPDATE s2 SET v = 20 WHERE id = 2");
  }

  void expect_waits_for(Trellis& t, const std::string& reader, const std::string& upstream,
                        const std::string& upstream_status) {
    auto s = t.status(reader);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->status, "waiting_to_backfill");
    ASSERT_EQ(s->upstream_waits.size(), 1u);
    EXPECT_EQ(s->upstream_waits[0].transform, upstream);
    EXPECT_EQ(s->upstream_waits[0].status, upstream_status);
  }
};

TEST_F(Resume, ReaderResumedWithItsUpstreamWaitsForItThenBuildsOnItsOwn) {
  {
    auto t = start(2);
    define_chain(*t);
    for (const char* target : {"d0", "d1", "o"}) t->apply(std::string("PAUSE TRANSFORM ") + target);
  }  // workers stopped
  write_while_paused();

  // A staging worker without drain threads: capture is installed and d0
  // moves to backfilling, but no build runs, so d0 stays not live.
  auto staging = start(0, true);
  EXPECT_EQ(staging->apply("RESUME TRANSFORM d0").status, "waiting_to_backfill");
  Applied resumed;
  ASSERT_NO_THROW(resumed = staging->apply("RESUME TRANSFORM d1"));
  EXPECT_EQ(resumed.status, "waiting_to_backfill");
  // o is resumed last: once the staging worker has moved it, it has
  // reconciled with d1 resumed too (and left d1 waiting).
  staging->apply("RESUME TRANSFORM o");
  await_status(*staging, "o", "backfilling");
  await_status(*staging, "d0", "backfilling");
  expect_waits_for(*staging, "d1", "public.d0", "backfilling");
  EXPECT_TRUE(staging->status("d0")->upstream_waits.empty());
  EXPECT_TRUE(staging->status("o")->upstream_waits.empty());

  // Drain threads build d0; d1 follows with no further statement.
  auto drains = start(2, false);
  await_status(*staging, "d0", "live");
  await_status(*staging, "d1", "live");
  await_status(*staging, "o", "live");
  EXPECT_TRUE(staging->status("d1")->upstream_waits.empty());
  await_converged(*staging);
  expect_oracle("d0");
  expect_oracle("d1");
  expect_oracle("o");

  // And the chain keeps flowing afterwards.
  sql("UPDATE s1 SET v1 = v1 * 2 WHERE id % 3 = 0; DELETE FROM s1 WHERE id = 7");
  await_converged(*staging);
  expect_oracle("d0");
  expect_oracle("d1");
}

TEST_F(Resume, ReaderResumedWhileItsUpstreamIsPausedWaitsUntilThatIsResumed) {
  auto t = start(2);
  define_chain(*t);
  for (const char* target : {"d0", "d1", "o"}) t->apply(std::string("PAUSE TRANSFORM ") + target);
  write_while_paused();

  ASSERT_NO_THROW(t->apply("RESUME TRANSFORM d1"));
  t->apply("RESUME TRANSFORM o");  // reconciled after d1 was resumed
  await_status(*t, "o", "live");
  expect_waits_for(*t, "d1", "public.d0", "paused");
  EXPECT_EQ(t->status("d0")->status, "paused");

  // The paused upstream cannot be dropped while the reader waits on it.
  try {
    t->apply("DROP TRANSFORM d0");
    ADD_FAILURE() << "DROP TRANSFORM of a transform a waiting reader reads was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::validation);
    EXPECT_NE(std::string(e.what()).find("is read by transform public.d1"), std::string::npos)
        << e.what();
  }

  t->apply("RESUME TRANSFORM d0");
  await_status(*t, "d0", "live");
  await_status(*t, "d1", "live");
  EXPECT_TRUE(t->status("d1")->upstream_waits.empty());
  await_converged(*t);
  expect_oracle("d0");
  expect_oracle("d1");
  expect_oracle("o");
}

TEST_F(Resume, NewTransformOverATargetThatIsNotLiveIsStillRefused) {
  auto expect_refused = [&](Trellis& t, const std::string& statement, const std::string& status) {
    try {
      t.apply(statement);
      ADD_FAILURE() << statement << " was accepted over a target that is not live";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::validation);
      EXPECT_NE(std::string(e.what()).find("source public.d0 is the target of transform "
                                           "public.d0, which is " +
                                           status + " and not live"),
                std::string::npos)
          << e.what();
    }
  };
  {
    auto registering = start(0, false);  // no workers: d0 stays waiting_to_backfill
    registering->apply("TRANSFORM d0 FROM s1 SELECT v1 % 7 AS f0_0");
    expect_refused(*registering, "TRANSFORM d2 FROM d0 SELECT f0_0 * 2 AS f2",
                   "waiting_to_backfill");
    EXPECT_FALSE(registering->status("d2"));
    EXPECT_TRUE(query("SELECT to_regclass('public.d2') IS NULL").get_bool(0, 0));
  }

  auto t = start(2);
  await_status(*t, "d0", "live");
  t->apply("TRANSFORM d1 FROM d0 SELECT f0_0::bigint + 1 AS f1_0");
  await_status(*t, "d1", "live");
  t->apply("PAUSE TRANSFORM d0");
  t->apply("PAUSE TRANSFORM d1");
  // RESUME of the existing reader is accepted; a new definition is not.
  ASSERT_NO_THROW(t->apply("RESUME TRANSFORM d1"));
  expect_refused(*t, "TRANSFORM d2 FROM d0 SELECT f0_0 * 2 AS f2", "paused");
  EXPECT_FALSE(t->status("d2"));

  t->apply("RESUME TRANSFORM d0");
  await_status(*t, "d0", "live");
  await_status(*t, "d1", "live");
  t->apply("TRANSFORM d2 FROM d0 SELECT f0_0 * 2 AS f2");  // accepted once d0 is live
  await_status(*t, "d2", "live");
  await_converged(*t);
  for (const char* target : {"d0", "d1", "d2"}) expect_oracle(target);
}

}  // namespace trellis::test
