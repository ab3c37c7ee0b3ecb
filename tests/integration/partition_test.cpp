// Partitioned sources (README, "Partitioned sources"): writes through the
// root, into a middle and straight into a leaf are all captured, and every
// partition event (CREATE ... PARTITION OF, ATTACH, DETACH, DETACH
// CONCURRENTLY, DROP, TRUNCATE of one partition), each while writers run,
// ends with every target equal to its definition. While an event is
// corrected for, status lists it under `correcting` and reads `backfilling`.
#include <atomic>
#include <random>
#include <thread>

#include "capture/move_guard.hpp"
#include "support/harness.hpp"
#include "support/http_get.hpp"

namespace trellis::test {

namespace {

// The tree: ev (RANGE k) -> ev_a [0, 100) leaf; ev_b [100, 200) HASH (id)
// -> ev_b0, ev_b1; ev_c [200, 300) RANGE (id) -> ev_c_lo (< 500), ev_c_hi
// (DEFAULT). Keys are (k, id).
const char* kTree =
    "CREATE TABLE ev (id bigint NOT NULL, k int NOT NULL, v int, note text, PRIMARY KEY (k, id)) "
    "PARTITION BY RANGE (k);"
    "CREATE TABLE ev_a PARTITION OF ev FOR VALUES FROM (0) TO (100);"
    "CREATE TABLE ev_b PARTITION OF ev FOR VALUES FROM (100) TO (200) PARTITION BY HASH (id);"
    "CREATE TABLE ev_b0 PARTITION OF ev_b FOR VALUES WITH (MODULUS 2, REMAINDER 0);"
    "CREATE TABLE ev_b1 PARTITION OF ev_b FOR VALUES WITH (MODULUS 2, REMAINDER 1);"
    "CREATE TABLE ev_c PARTITION OF ev FOR VALUES FROM (200) TO (300) PARTITION BY RANGE (id);"
    "CREATE TABLE ev_c_lo PARTITION OF ev_c FOR VALUES FROM (MINVALUE) TO (500);"
    "CREATE TABLE ev_c_hi PARTITION OF ev_c DEFAULT;"
    "INSERT INTO ev SELECT g, g % 300, g % 17, 'n' || g FROM generate_series(1, 3000) g";

const char* kCopy = "TRANSFORM ev_copy FROM ev SELECT v * 2 AS v2, note AS note WHERE v % 5 <> 0";
const char* kSums =
    "TRANSFORM ev_sums FROM ev GROUP BY k SELECT COUNT(*) AS n, SUM(v) AS s, "
    "MAX(v) AS m";

// Random writes until `stop`: through the root (k in [0, 500), so a write
// into a range no partition holds fails, as the application's would), into
// a middle, straight into leaves, updates and MERGEs that move rows between
// partitions, deletes. Errors (a missing partition, a key clash) are the
// application's business and are rolled back.
void write_until(const std::string& url, int seed, const std::atomic<bool>& stop) {
  auto conn = pg::Connection::open(url, {.search_path = "public"});
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> kind(0, 11), id(1, 4000), k(0, 499), v(0, 60);
  while (!stop) {
    std::string i = std::to_string(id(rng)), kk = std::to_string(k(rng)),
                vv = std::to_string(v(rng));
    std::string stmt;
    switch (kind(rng)) {
      case 0:
      case 1:
        stmt = "INSERT INTO ev VALUES (" + i + ", " + kk + ", " + vv + ", 'r" + vv +
               "') ON CONFLICT (k, id) DO UPDATE SET v = EXCLUDED.v";
        break;
      case 2:
        stmt = "INSERT INTO ev_a VALUES (" + i + ", " + std::to_string(id(rng) % 100) + ", " + vv +
               ", 'leaf') ON CONFLICT (k, id) DO UPDATE SET v = EXCLUDED.v + 1";
        break;
      case 3:
        stmt = "INSERT INTO ev_b VALUES (" + i + ", " + std::to_string(100 + id(rng) % 100) + ", " +
               vv + ", 'middle') ON CONFLICT DO NOTHING";
        break;
      case 4:
        stmt = "UPDATE ev_c_hi SET v = v + 1, note = note || 'h' WHERE id % 50 = " +
               std::to_string(id(rng) % 50);
        break;
      case 5:
        stmt = "UPDATE ev SET k = " + kk + " WHERE id = " + i;  // may move partitions
        break;
      case 6:
        stmt = "UPDATE ev SET v = v + 1 WHERE k = " + kk;
        break;
      case 7:
        stmt = "DELETE FROM ev WHERE id = " + i;
        break;
      case 8:
        stmt = "DELETE FROM ev_a WHERE id % 97 = " + std::to_string(id(rng) % 97);
        break;
      case 10:  // moves rows that match; statement triggers see none of it
        stmt = "MERGE INTO ev USING (SELECT id, k FROM ev WHERE id % 400 = " +
               std::to_string(id(rng) % 400) +
               ") s ON ev.id = s.id AND ev.k = s.k WHEN MATCHED THEN UPDATE SET k = " + kk;
        break;
      case 11:  // an upsert that may move the row it matches
        stmt = "MERGE INTO ev USING (VALUES (" + i + "::bigint, " + kk +
               ")) s(id, k) ON ev.id = s.id WHEN MATCHED THEN UPDATE SET k = s.k, v = " + vv +
               " WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.k, " + vv + ", 'merged')";
        break;
      default:
        stmt = "INSERT INTO ev SELECT g, " + kk + ", " + vv + ", 'bulk' FROM generate_series(" + i +
               ", " + i + " + 20) g ON CONFLICT DO NOTHING";
    }
    try {
      conn->exec_script(stmt);
    } catch (const std::exception&) {  // one statement: nothing is left open
    }
  }
}

class Writers {
 public:
  Writers(const std::string& url, int n) {
    for (int w = 0; w < n; ++w) threads_.emplace_back(write_until, url, 7 + w, std::cref(stop_));
  }
  ~Writers() { join(); }
  void join() {
    stop_ = true;
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace

class Partitions : public TrellisTest {
 protected:
  void define_both(Trellis& t) {
    t.apply(kCopy);
    t.apply(kSums);
    await_status(t, "ev_copy", "live");
    await_status(t, "ev_sums", "live");
  }
  // The recorded partitions are the tree of ev and no correction is open,
  // so every event so far was noticed and corrected for.
  bool corrected(const std::string& root = "ev") {
    return query(
               "SELECT (SELECT array_agg(p.relid ORDER BY p.relid) FROM "
               "trellis.captured_partitions p JOIN trellis.captured_tables c ON c.id = "
               "p.table_id WHERE NOT p.left_tree AND c.table_name = '" +
               root +
               "') IS NOT DISTINCT FROM (SELECT array_agg(relid ORDER BY relid) FROM (SELECT "
               "relid::oid FROM pg_partition_tree('" +
               root +
               "') WHERE level > 0) t) AND NOT EXISTS (SELECT 1 FROM "
               "trellis.captured_partitions WHERE left_tree) AND NOT EXISTS (SELECT 1 FROM "
               "trellis.partition_corrections)")
        .get_bool(0, 0);
  }
  bool hides_merge_moves() {
    auto conn = pg::Connection::open(url_);
    return capture::server_hides_merge_moves(*conn);
  }
  // The move guard's triggers on the tree of ev, enabled ALWAYS.
  int64_t move_guards() {
    return query(
               "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'trellis\\_%\\_move\\_%' "
               "AND tgenabled = 'A' AND tgrelid IN (SELECT relid FROM pg_partition_tree('ev'))")
        .get_int(0, 0);
  }
  void expect_exact(Trellis& t) {
    ASSERT_TRUE(eventually([&] { return corrected(); }, std::chrono::seconds(60)))
        << "partition events not corrected for";
    await_status(t, "ev_copy", "live");
    await_status(t, "ev_sums", "live");
    await_converged(t);
    expect_oracle("ev_copy");
    expect_oracle("ev_sums");
  }
  // A self-check of `target` reports one divergence, a capture fault whose
  // detail holds `says`.
  void audited_as_one_capture_fault(Trellis& t, const std::string& target,
                                    const std::string& says) {
    auto job = t.self_check(target, {});
    auto done = t.await_self_check(job.id, std::chrono::seconds(60));
    ASSERT_TRUE(done.report.has_value()) << done.error;
    EXPECT_EQ(done.report->outcome, "diverged");
    ASSERT_EQ(done.report->divergences.size(), 1u);
    EXPECT_EQ(done.report->divergences[0].kind, "capture");
    EXPECT_NE(done.report->divergences[0].detail.find(says), std::string::npos)
        << done.report->divergences[0].detail;
  }
  // With the staging worker back (`t` ran drains only), the drift check
  // pauses both readers with a disruption whose message holds `says`; RESUME
  // reinstalls capture and rebuilds them.
  void paused_by_disruption_until_resume(std::unique_ptr<Trellis>& t, const std::string& says) {
    t->shutdown();
    t = start(2);
    await_status(*t, "ev_copy", "paused");
    await_status(*t, "ev_sums", "paused");
    for (const char* reader : {"ev_copy", "ev_sums"}) {
      auto failure = t->status(reader)->capture_failure;
      ASSERT_TRUE(failure.has_value()) << reader;
      EXPECT_EQ(failure->kind, "disruption");
      EXPECT_NE(failure->error.find(says), std::string::npos) << failure->error;
    }
    t->apply("RESUME TRANSFORM ev_copy");
    t->apply("RESUME TRANSFORM ev_sums");
    await_status(*t, "ev_copy", "live");
    await_status(*t, "ev_sums", "live");
  }
  // One event while two writers run, then the oracle.
  void event_under_writes(Trellis& t, const std::string& event) {
    {
      Writers writers(url_, 2);
      std::this_thread::yield();
      sql(event);
      // Writes go on past the event: those into a new partition, and those
      // the event's correction races.
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(700);
      eventually([&] { return std::chrono::steady_clock::now() > until; });
    }
    SCOPED_TRACE(event);
    expect_exact(t);
  }
};

TEST_F(Partitions, WritesThroughTheRootAMiddleAndStraightIntoLeavesAreCaptured) {
  sql(kTree);
  auto t = start(2);
  define_both(*t);
  expect_oracle("ev_copy");
  expect_oracle("ev_sums");
  // Capture is on every node: the root, both middles, the five leaves.
  // (And, where statement triggers miss a MERGE's moves, the move guard on
  // the root and its clone on each of them.)
  EXPECT_EQ(query("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'trellis\\_%' AND tgrelid IN "
                  "(SELECT relid FROM pg_partition_tree('ev'))")
                .get_int(0, 0),
            8 * 4 + (hides_merge_moves() ? 8 : 0));
  {
    Writers writers(url_, 3);
    eventually([&] { return query("SELECT count(*) > 3600 FROM ev").get_bool(0, 0); });
  }
  expect_exact(*t);
  // A TRUNCATE of the root, then rows again.
  sql("TRUNCATE ev; INSERT INTO ev SELECT g, g % 300, 1, 'again' FROM generate_series(1, 50) g");
  expect_exact(*t);
  EXPECT_EQ(query("SELECT count(*) FROM ev_copy").get_int(0, 0), 50);
}

// PostgreSQL 15 hands the rows a MERGE's UPDATE moves into another
// partition to no statement trigger; the move guard stages them instead.
TEST_F(Partitions, AMergeThatMovesRowsBetweenPartitionsIsCaptured) {
  sql(kTree);
  auto t = start(2);
  define_both(*t);
  EXPECT_EQ(move_guards(), hides_merge_moves() ? 8 : 0);
  // UPDATE only: from leaf ev_a into the middle ev_c (and its leaves).
  sql("MERGE INTO ev USING (SELECT id, k FROM ev WHERE k < 10) s ON ev.id = s.id AND ev.k = s.k "
      "WHEN MATCHED THEN UPDATE SET k = s.k + 250");
  // Between the hash leaves of ev_b: the key's id changes, its k does not.
  sql("MERGE INTO ev USING (SELECT id, k FROM ev WHERE k BETWEEN 100 AND 104) s ON ev.id = s.id "
      "AND ev.k = s.k WHEN MATCHED THEN UPDATE SET id = s.id + 100001");
  // Named the middle: from ev_c_lo into its DEFAULT leaf.
  sql("MERGE INTO ev_c USING (SELECT id, k FROM ev_c_lo WHERE id % 3 = 0) s ON ev_c.id = s.id AND "
      "ev_c.k = s.k WHEN MATCHED THEN UPDATE SET id = s.id + 5000");
  // Every action at once: moves, inserts and deletes.
  sql("MERGE INTO ev USING (SELECT g AS id, g % 300 AS k FROM generate_series(2990, 3100) g) s ON "
      "ev.id = s.id WHEN MATCHED AND s.id % 2 = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET k = "
      "(s.k + 100) % 300 WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.k, 9, 'merged')");
  expect_exact(*t);
  EXPECT_EQ(
      query("SELECT count(*) FROM ev_copy WHERE k >= 250 AND k < 260").get_int(0, 0),
      query("SELECT count(*) FROM ev WHERE k >= 250 AND k < 260 AND v % 5 <> 0").get_int(0, 0));
  // A partitioned partition attached (the guard is cloned onto it and its
  // leaves), then writers that MERGE too.
  sql("CREATE TABLE ev_f (id bigint NOT NULL, k int NOT NULL, v int, note text, PRIMARY KEY (k, "
      "id)) PARTITION BY HASH (id);"
      "CREATE TABLE ev_f0 PARTITION OF ev_f FOR VALUES WITH (MODULUS 2, REMAINDER 0);"
      "CREATE TABLE ev_f1 PARTITION OF ev_f FOR VALUES WITH (MODULUS 2, REMAINDER 1);"
      "ALTER TABLE ev ATTACH PARTITION ev_f FOR VALUES FROM (300) TO (500)");
  expect_exact(*t);
  EXPECT_EQ(move_guards(), hides_merge_moves() ? 11 : 0);
  sql("INSERT INTO ev_f SELECT g, 300 + g % 200, g % 6, 'f' FROM generate_series(1, 300) g");
  sql("MERGE INTO ev USING (SELECT id, k FROM ev_f0) s ON ev.id = s.id AND ev.k = s.k WHEN "
      "MATCHED THEN UPDATE SET id = s.id + 1, k = s.k - 300");
  {
    Writers writers(url_, 2);
    eventually([&] { return query("SELECT count(*) > 3600 FROM ev").get_bool(0, 0); });
  }
  expect_exact(*t);
}

// A partition key of a type that is not built in (here an enum) is watched
// by its stored image: there may be no `=` for it on the worker's path.
TEST_F(Partitions, TheMoveGuardWatchesAKeyOfAUserDefinedType) {
  sql("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');"
      "CREATE TABLE mo (id bigint NOT NULL, m mood NOT NULL, v int, PRIMARY KEY (m, id)) "
      "PARTITION BY LIST (m);"
      "CREATE TABLE mo_sad PARTITION OF mo FOR VALUES IN ('sad');"
      "CREATE TABLE mo_rest PARTITION OF mo FOR VALUES IN ('ok', 'happy');"
      "INSERT INTO mo SELECT g, (ARRAY['sad', 'ok', 'happy']::mood[])[1 + g % 3], g FROM "
      "generate_series(1, 300) g");
  auto t = start(2);
  t->apply("TRANSFORM mo_copy FROM mo SELECT v AS v");
  await_status(*t, "mo_copy", "live");
  if (hides_merge_moves()) {
    EXPECT_NE(query("SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = 'mo'::regclass "
                    "AND tgname LIKE 'trellis\\_%\\_move\\_%'")
                  .get(0, 0)
                  .find("record_image_eq(ROW(old.m), ROW(new.m))"),
              std::string::npos);
  }
  sql("MERGE INTO mo USING (SELECT id, m FROM mo WHERE m = 'sad') s ON mo.id = s.id AND mo.m = s.m "
      "WHEN MATCHED THEN UPDATE SET m = 'happy'");
  sql("MERGE INTO mo USING (SELECT id, m FROM mo WHERE m = 'ok' AND id < 100) s ON mo.id = s.id "
      "AND mo.m = s.m WHEN MATCHED THEN UPDATE SET m = 'sad'");
  await_converged(*t);
  expect_oracle("mo_copy");
  EXPECT_EQ(query("SELECT count(*) FROM mo_copy WHERE m = 'sad'").get_int(0, 0), 33);
}

// A disabled move guard is audited, then pauses the readers until RESUME.
TEST_F(Partitions, ADisabledMoveGuardIsAuditedThenPausesItsReadersUntilResume) {
  sql(kTree);
  {
    auto staging = start(2);
    define_both(*staging);
  }
  if (!hides_merge_moves())
    GTEST_SKIP() << "this server hands a MERGE's moves to statement triggers";
  auto t = start(2, /*staging=*/false);
  auto guard =
      query(
          "SELECT tgname FROM pg_trigger WHERE tgrelid = 'ev_b0'::regclass AND tgname LIKE "
          "'trellis\\_%\\_move\\_%'")
          .get(0, 0);
  sql("ALTER TABLE ev_b0 DISABLE TRIGGER " + guard);
  audited_as_one_capture_fault(
      *t, "ev_sums", "the capture trigger " + guard + " on public.ev or on one of its partitions");
  // A move it misses: out of ev_b0, whose clone is off.
  sql("MERGE INTO ev USING (SELECT id, k FROM ev_b0) s ON ev.id = s.id AND ev.k = s.k WHEN "
      "MATCHED THEN UPDATE SET k = 20");
  paused_by_disruption_until_resume(t, "rows a MERGE moved between partitions");
  EXPECT_EQ(move_guards(), 8);
  sql("MERGE INTO ev USING (SELECT id, k FROM ev WHERE k = 20) s ON ev.id = s.id AND ev.k = s.k "
      "WHEN MATCHED THEN UPDATE SET k = 150");
  expect_exact(*t);
}

TEST_F(Partitions, EachPartitionEventUnderConcurrentWritesEndsExact) {
  sql(kTree);
  auto t = start(2);
  define_both(*t);
  // A new partition, written through the root and straight into it at once.
  event_under_writes(*t,
                     "CREATE TABLE ev_d PARTITION OF ev FOR VALUES FROM (300) TO (400);"
                     "INSERT INTO ev_d SELECT g, 300 + g % 100, 3, 'direct' FROM "
                     "generate_series(1, 200) g");
  // A table with rows attached: its rows appear in ev with no write at all.
  sql("CREATE TABLE ev_e (id bigint NOT NULL, k int NOT NULL, v int, note text);"
      "INSERT INTO ev_e SELECT g, 400 + g % 100, 4, 'attached' FROM generate_series(1, 500) g;"
      "ALTER TABLE ev_e ADD PRIMARY KEY (k, id)");
  event_under_writes(*t, "ALTER TABLE ev ATTACH PARTITION ev_e FOR VALUES FROM (400) TO (500)");
  EXPECT_GE(query("SELECT count(*) FROM ev_copy WHERE note = 'attached'").get_int(0, 0), 1);
  // A leaf detached: its rows leave ev; writes to it afterwards are not ev's.
  event_under_writes(*t, "ALTER TABLE ev DETACH PARTITION ev_a");
  sql("INSERT INTO ev_a VALUES (999999, 5, 5, 'detached')");
  expect_exact(*t);
  EXPECT_EQ(query("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'ev_a'::regclass AND tgname "
                  "LIKE 'trellis\\_%'")
                .get_int(0, 0),
            0)
      << "capture left on a detached partition";
  // A middle with its leaves detached concurrently (two transactions).
  event_under_writes(*t, "ALTER TABLE ev DETACH PARTITION ev_b CONCURRENTLY");
  // A partitioned middle dropped with its leaves: their keys are gone with
  // them, so the readers rebuild.
  event_under_writes(*t, "DROP TABLE ev_c");
  // One partition truncated.
  event_under_writes(*t, "TRUNCATE ev_d");
  EXPECT_EQ(query("SELECT count(*) FROM ev_copy WHERE k >= 300 AND k < 400 AND note = 'direct'")
                .get_int(0, 0),
            0);
  // Nothing of the departed partitions' capture is left behind.
  EXPECT_EQ(query("SELECT count(*) FROM pg_proc WHERE proname ~ '^capture_[0-9]+_[0-9]+_' AND "
                  "NOT EXISTS (SELECT 1 FROM trellis.captured_partitions p WHERE proname LIKE "
                  "'capture\\_%\\_' || p.relid || '\\_%')")
                .get_int(0, 0),
            0);
}

TEST_F(Partitions, AnEventIsListedAsCorrectingWhileItsKeysWaitForTheDrains) {
  sql(kTree);
  {
    auto t = start(2);
    define_both(*t);
  }
  // Only the staging worker runs: the correction's keys are staged and wait.
  auto staging = start(0);
  sql("CREATE TABLE ev_e (LIKE ev); INSERT INTO ev_e SELECT g, 400 + g % 100, 4, 'attached' "
      "FROM generate_series(1, 300) g; ALTER TABLE ev_e ADD PRIMARY KEY (k, id);"
      "ALTER TABLE ev ATTACH PARTITION ev_e FOR VALUES FROM (400) TO (500)");
  ASSERT_TRUE(eventually([&] { return !staging->status("ev_copy")->correcting.empty(); },
                         std::chrono::seconds(30)));
  for (const char* target : {"ev_copy", "ev_sums"}) {
    auto s = *staging->status(target);
    EXPECT_EQ(s.status, "backfilling") << target;
    ASSERT_EQ(s.correcting.size(), 1u) << target;
    EXPECT_EQ(s.correcting[0].partition, "public.ev_e");
    EXPECT_EQ(s.correcting[0].reason, "attached");
    EXPECT_FALSE(s.correcting[0].since.empty());
  }
  EXPECT_NE(oracle_diff("ev_copy"), "");  // not corrected yet
  std::string metrics = staging->metrics_text();
  EXPECT_EQ(sample(metrics, "trellis_partitions_correcting", {"target=\"public.ev_copy\""}), 1)
      << metrics;
  // A paused transform lists none.
  staging->apply("PAUSE TRANSFORM ev_sums");
  EXPECT_TRUE(staging->status("ev_sums")->correcting.empty());
  auto drains = start(2, /*staging=*/false);
  ASSERT_TRUE(eventually([&] { return staging->status("ev_copy")->correcting.empty(); },
                         std::chrono::seconds(60)));
  await_status(*staging, "ev_copy", "live");
  await_converged(*staging);
  expect_oracle("ev_copy");
}

TEST_F(Partitions, APartitionsDisabledTriggerIsAuditedThenPausesItsReadersUntilResume) {
  sql(kTree);
  {
    auto staging = start(2);
    define_both(*staging);
  }
  // Drains only: no drift check pauses them, so the audit meets the fault.
  auto t = start(2, /*staging=*/false);
  auto trigger = query(
                     "SELECT tgname FROM pg_trigger WHERE tgrelid = 'ev_b1'::regclass AND "
                     "tgname LIKE 'trellis\\_ins%'")
                     .get(0, 0);
  sql("ALTER TABLE ev_b1 DISABLE TRIGGER " + trigger);
  audited_as_one_capture_fault(
      *t, "ev_copy", trigger + " (INSERT) on partition public.ev_b1 of public.ev is not enabled");
  // A write it misses.
  const std::string into_b1 =
      " g WHERE satisfies_hash_partition('ev_b'::regclass::oid, 2, 1, g::bigint)";
  sql("INSERT INTO ev_b1 SELECT g, 150, 1, 'unseen' FROM generate_series(10001, 10100)" + into_b1);
  paused_by_disruption_until_resume(t, "partition public.ev_b1 of public.ev");
  sql("INSERT INTO ev_b1 SELECT g, 160, 1, 'seen' FROM generate_series(10101, 10200)" + into_b1);
  expect_exact(*t);
}

TEST_F(Partitions, ADetachAndAttachBetweenTwoLooksIsStillCorrected) {
  sql(kTree);
  auto t = start(2);
  define_both(*t);
  // Detached and attached again at once, so no look sees it away; what
  // drains did while its rows were away (here: deleted their target rows)
  // is undone because its pg_inherits row is new.
  sql("BEGIN; ALTER TABLE ev DETACH PARTITION ev_a; DELETE FROM ev_copy WHERE k < 100;"
      "ALTER TABLE ev ATTACH PARTITION ev_a FOR VALUES FROM (0) TO (100); COMMIT");
  ASSERT_TRUE(eventually(
      [&] { return query("SELECT count(*) > 0 FROM ev_copy WHERE k < 100").get_bool(0, 0); },
      std::chrono::seconds(30)));
  expect_exact(*t);
}

TEST_F(Partitions, AwaitRightAfterAPartitionEventCoversItsCorrection) {
  sql(kTree);
  auto t = start(2);
  define_both(*t);
  // A token taken at once, before the staging worker can have noticed the
  // detach: converged must mean corrected.
  sql("ALTER TABLE ev DETACH PARTITION ev_b");
  await_converged(*t);
  expect_oracle("ev_copy");
  expect_oracle("ev_sums");
  sql("ALTER TABLE ev ATTACH PARTITION ev_b FOR VALUES FROM (100) TO (200)");
  await_converged(*t);
  expect_oracle("ev_copy");
  expect_oracle("ev_sums");
}

TEST_F(Partitions, ANewPartitionWhoseCaptureWaitsForALockIsListedWhileWritersKeepMoving) {
  sql(kTree);
  {
    auto first = start(2);
    define_both(*first);
  }
  // No staging worker runs until a writer of the new partition holds it
  // without committing: capture on it waits.
  sql("CREATE TABLE ev_d PARTITION OF ev FOR VALUES FROM (300) TO (400)");
  auto blocker = pg::Connection::open(url_, {.search_path = "public"});
  blocker->exec_script("BEGIN; INSERT INTO ev_d VALUES (1, 301, 1, 'open')");
  auto t = start(2);
  ASSERT_TRUE(eventually(
      [&] {
        auto s = t->status("ev_copy");
        return !s->correcting.empty() && s->correcting[0].partition == "public.ev_d" &&
               s->correcting[0].reason == "attached" && s->status == "backfilling";
      },
      std::chrono::seconds(30)));
  // Writes straight into it and through the root go on meanwhile: each
  // install attempt queues ahead of them for at most its lock timeout.
  for (int i = 0; i < 50; ++i)
    sql("INSERT INTO ev_d VALUES (" + std::to_string(100 + i) + ", 350, 2, 'direct');" +
        "INSERT INTO ev VALUES (" + std::to_string(9000 + i) + ", 305, 3, 'root')");
  EXPECT_EQ(query("SELECT count(*) FROM trellis.captured_partitions WHERE relid = "
                  "'ev_d'::regclass")
                .get_int(0, 0),
            0)
      << "capture was installed while a writer held the partition";
  blocker->exec_script("COMMIT");
  ASSERT_TRUE(eventually([&] { return corrected(); }, std::chrono::seconds(60)));
  expect_exact(*t);
  EXPECT_EQ(query("SELECT count(*) FROM ev_copy WHERE k >= 300").get_int(0, 0), 101);
}

TEST_F(Partitions, PausedWhilePartOfItsCaptureWaitedLeavesNoCaptureBehind) {
  sql(kTree);
  auto t = start(2);
  // One partition's install waits: the root's is not done when the only
  // reader is paused.
  auto blocker = pg::Connection::open(url_, {.search_path = "public"});
  blocker->exec_script("BEGIN; INSERT INTO ev_c_hi VALUES (100000, 250, 1, 'open')");
  t->apply(kCopy);
  ASSERT_TRUE(eventually([&] {
    return query("SELECT count(*) > 0 FROM trellis.captured_partitions").get_bool(0, 0) &&
           t->status("ev_copy")->capture_wait.has_value();
  }));
  t->apply("PAUSE TRANSFORM ev_copy");
  await_converged(*t);  // nothing waits on partitions nobody reads
  // Removing capture from the partitions waits for the writer too (its
  // insert locks the partition's parent); then none is left.
  blocker->exec_script("COMMIT");
  ASSERT_TRUE(eventually([&] {
    return query(
               "SELECT NOT EXISTS (SELECT 1 FROM trellis.captured_partitions) AND NOT EXISTS "
               "(SELECT 1 FROM pg_trigger WHERE tgname LIKE 'trellis\\_%' AND tgrelid IN "
               "(SELECT relid FROM pg_partition_tree('ev')))")
        .get_bool(0, 0);
  }));
  t->apply("RESUME TRANSFORM ev_copy");
  await_status(*t, "ev_copy", "live");
  await_converged(*t);
  expect_oracle("ev_copy");
}

TEST_F(Partitions, APartitionMovedToAnotherCapturedTableStagesUnderItsNewRoot) {
  sql(kTree);
  sql("CREATE TABLE ev2 (id bigint NOT NULL, k int NOT NULL, v int, note text, PRIMARY KEY (k, "
      "id)) PARTITION BY RANGE (k); CREATE TABLE ev2_rest PARTITION OF ev2 FOR VALUES FROM (100) "
      "TO (1000); INSERT INTO ev2 VALUES (1, 500, 5, 'two')");
  auto t = start(2);
  define_both(*t);
  t->apply("TRANSFORM ev2_copy FROM ev2 SELECT v AS v, note AS note");
  await_status(*t, "ev2_copy", "live");
  // Moved in one go, before any look: its triggers still call ev's
  // functions, so it must get ev2's.
  sql("BEGIN; ALTER TABLE ev DETACH PARTITION ev_a; ALTER TABLE ev2 ATTACH PARTITION ev_a FOR "
      "VALUES FROM (0) TO (100); COMMIT");
  ASSERT_TRUE(
      eventually([&] { return corrected() && corrected("ev2"); }, std::chrono::seconds(60)));
  sql("UPDATE ev_a SET v = v + 1000, note = 'moved' WHERE id % 3 = 0");
  expect_exact(*t);
  await_status(*t, "ev2_copy", "live");
  expect_oracle("ev2_copy");
  EXPECT_GT(query("SELECT count(*) FROM ev2_copy WHERE note = 'moved'").get_int(0, 0), 0);
  EXPECT_EQ(query("SELECT count(*) FROM ev_copy WHERE k < 100").get_int(0, 0), 0);
}

TEST_F(Partitions, APartitionedJoinedTableIsCapturedAndItsEventsCorrectItsReaders) {
  sql("CREATE TABLE products (id int PRIMARY KEY, cat text, price int) PARTITION BY HASH (id);"
      "CREATE TABLE products_0 PARTITION OF products FOR VALUES WITH (MODULUS 3, REMAINDER 0);"
      "CREATE TABLE products_1 PARTITION OF products FOR VALUES WITH (MODULUS 3, REMAINDER 1);"
      "CREATE TABLE products_2 PARTITION OF products FOR VALUES WITH (MODULUS 3, REMAINDER 2);"
      "INSERT INTO products SELECT g, 'c' || g % 4, g FROM generate_series(1, 60) g;"
      "CREATE TABLE orders (id int PRIMARY KEY, product_id int, qty int);"
      "CREATE INDEX ON orders (product_id);"
      "INSERT INTO orders SELECT g, 1 + g % 70, g % 5 FROM generate_series(1, 500) g");
  auto t = start(2);
  t->apply(
      "TRANSFORM order_view FROM orders o JOIN products p ON p.id = o.product_id SELECT "
      "o.qty * p.price AS amount, p.cat AS cat");
  t->apply(
      "TRANSFORM by_cat FROM orders o LEFT JOIN products p ON p.id = o.product_id GROUP BY "
      "p.cat SELECT SUM(o.qty) AS q, COUNT(*) AS n");
  await_status(*t, "order_view", "live");
  await_status(*t, "by_cat", "live");
  auto exact = [&] {
    ASSERT_TRUE(eventually([&] { return corrected("products"); }, std::chrono::seconds(60)));
    await_status(*t, "order_view", "live");
    await_status(*t, "by_cat", "live");
    await_converged(*t);
    expect_oracle("order_view");
    expect_oracle("by_cat");
  };
  // Writes straight into a partition of the joined table.
  sql("UPDATE products_1 SET price = price + 100, cat = 'moved'");
  exact();
  // Detached: its products leave the join; attached again: they come back.
  sql("ALTER TABLE products DETACH PARTITION products_2");
  exact();
  EXPECT_EQ(query("SELECT count(*) FROM order_view WHERE amount IS NOT NULL AND NOT EXISTS "
                  "(SELECT 1 FROM products p WHERE p.cat = order_view.cat)")
                .get_int(0, 0),
            0);
  sql("ALTER TABLE products ATTACH PARTITION products_2 FOR VALUES WITH (MODULUS 3, REMAINDER "
      "2)");
  exact();
  // Dropped: its products are gone for good.
  sql("DROP TABLE products_0");
  exact();
}

TEST_F(Partitions, AHundredLeafTableIsCapturedAndCorrected) {
  sql("CREATE TABLE wide (id int PRIMARY KEY, grp int NOT NULL, amount int) PARTITION BY RANGE "
      "(id); CREATE INDEX ON wide (grp);"
      "DO $$ BEGIN FOR i IN 0..99 LOOP EXECUTE format('CREATE TABLE wide_%s PARTITION OF wide "
      "FOR VALUES FROM (%s) TO (%s)', i, i * 1000, (i + 1) * 1000); END LOOP; END $$;"
      "INSERT INTO wide SELECT g, g % 37, g % 101 FROM generate_series(0, 99999) g");
  auto t = start(2);
  t->apply("TRANSFORM wide_copy FROM wide SELECT amount + grp AS a");
  t->apply("TRANSFORM wide_sums FROM wide GROUP BY grp SELECT COUNT(*) AS n, SUM(amount) AS s");
  await_status(*t, "wide_copy", "live");
  await_status(*t, "wide_sums", "live");
  EXPECT_EQ(query("SELECT count(*) FROM trellis.captured_partitions").get_int(0, 0), 100);
  // Writes straight into many leaves, then a leaf added and one detached.
  sql("DO $$ BEGIN FOR i IN 0..99 LOOP EXECUTE format('UPDATE wide_%s SET amount = amount + 1 "
      "WHERE id %% 7 = 0', i); EXECUTE format('DELETE FROM wide_%s WHERE id %% 11 = 0', i); END "
      "LOOP; END $$;"
      "CREATE TABLE wide_100 PARTITION OF wide FOR VALUES FROM (100000) TO (101000);"
      "INSERT INTO wide_100 SELECT g, 5, 1 FROM generate_series(100000, 100999) g;"
      "ALTER TABLE wide DETACH PARTITION wide_42");
  ASSERT_TRUE(eventually([&] { return corrected("wide"); }, std::chrono::seconds(60)));
  EXPECT_EQ(query("SELECT count(*) FROM trellis.captured_partitions").get_int(0, 0), 100);
  await_converged(*t);
  expect_oracle("wide_copy");
  expect_oracle("wide_sums");
}

}  // namespace trellis::test
