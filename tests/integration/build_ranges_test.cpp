// A 1-1 build by key ranges (docs/architecture.md, "Building by ranges"):
// a change committed under an open range (after the range's snapshot) is
// parked and re-derived before live, where re-deriving it at once would be
// overwritten by the range; a rebuild over a target readers use rewrites it
// in place and never empties it; a worker killed inside a range or inside
// the discharge of parked keys loses nothing. A range is held open
// deterministically by a field function waiting on an advisory lock the
// test holds.
#include <fmt/format.h>

#include <thread>

#include "compile/transform_sql.hpp"
#include "support/child_workers.hpp"
#include "support/gate.hpp"

namespace trellis::test {

namespace {

// The range gate holds ranges (and every re-derive of a positive value)
// open; the discharge gate holds re-derives of negative values.
constexpr int kRangeGate = kPositiveGate;
constexpr int kDischargeGate = kNegativeGate;

constexpr const char* kDefine = "TRANSFORM dst FROM src SELECT public.gate(v) AS v, v * 2 AS twice";
// The aggregate's ranges and re-derives evaluate its WHERE per source row.
constexpr const char* kDefineGroups =
    "TRANSFORM dst FROM src GROUP BY grp SELECT SUM(v) AS total, COUNT(*) AS n, MAX(v) AS top "
    "WHERE public.gate(v) IS NOT NULL";
// Every field from the running state (a fold by heap blocks when it has few
// groups); the gate holds the fold's sum open.
constexpr const char* kDefineFold =
    "TRANSFORM dst FROM src GROUP BY grp SELECT SUM(public.gate(v)) AS total, COUNT(*) AS n, "
    "AVG(v) AS mean";

}  // namespace

class BuildRanges : public TrellisTest {
 protected:
  void create_source(int rows, int groups = 10) {
    sql(kGateFunction);
    sql("CREATE TABLE src (id int PRIMARY KEY, v int NOT NULL, grp int NOT NULL)");
    sql("CREATE INDEX ON src (grp)");
    sql(fmt::format("INSERT INTO src SELECT g, g, g % {} FROM generate_series(1, {}) g", groups,
                    rows));
  }

  // Defines kDefineFold (ranges of 100 entries) with its group phase held
  // open by the range gate its SUM reads; returns once a range waits on it.
  std::unique_ptr<Trellis> define_fold_held_in_its_group_phase(
      std::unique_ptr<pg::Connection>& gate) {
    gate = hold(kRangeGate);
    auto t = Trellis::connect(small_ranges(2));
    t->apply(kDefineFold);
    EXPECT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
    EXPECT_EQ(phase(), "group_ranges");
    return t;
  }

  // Trellis statements waiting on an advisory lock (the gate).
  int64_t gate_waits() {
    return count(
        "SELECT count(*) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid AND NOT "
        "l.granted AND l.locktype = 'advisory' WHERE a.application_name = 'trellis'");
  }

  int64_t claims(const std::string& where) {
    return count("SELECT count(*) FROM trellis.range_claims WHERE " + where);
  }

  // The ledger's indexes, and those of them that lead with its group.
  int64_t ledger_indexes() {
    return count("SELECT count(*) FROM pg_index WHERE indrelid = 'dst__ledger'::regclass");
  }
  int64_t ledger_group_indexes() {
    return count(
        "SELECT count(*) FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND "
        "a.attnum = i.indkey[0] WHERE i.indrelid = 'dst__ledger'::regclass AND a.attname = "
        "'__ledger_group'");
  }

  // Forks a worker process (one drain thread, ranges of 100, no staging)
  // into `child`, defines `statement` through a handle that stages (kept
  // alive by the caller), and returns once one of the worker's build
  // statements waits on the range gate the caller holds.
  std::unique_ptr<Trellis> define_over_a_worker_held_by_the_gate(const char* statement,
                                                                 ChildGuard& child) {
    child.pid = fork_worker_process(small_ranges(1, /*staging=*/false));
    EXPECT_GT(child.pid, 0);
    auto staging = start(0);
    staging->apply(statement);
    EXPECT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
    return staging;
  }

  // Changes every seventh source row, rebuilds the live target in place
  // (request_backfill) and expects it exact, hidden state included.
  void rebuild_after_changes_and_expect_exact(Trellis& t) {
    sql("UPDATE src SET v = v + 1 WHERE id % 7 = 0");
    EXPECT_EQ(t.request_backfill("public.src"), 1);
    await_status(t, "dst", "live");
    await_converged(t);
    expect_oracle("dst");
    expect_audit_converged(t);
  }

  void release_and_expect_live_and_exact(std::unique_ptr<pg::Connection>& gate, Trellis& t) {
    release(*gate, kRangeGate);
    await_status(t, "dst", "live");
    await_converged(t);
    expect_oracle("dst");
    expect_audit_converged(t);
  }

  std::unique_ptr<pg::Connection> hold(int key) { return hold_gate(url_, key); }
  void release(pg::Connection& gate, int key) { release_gate(gate, key); }

  // Defines `statement` and lets it go live, then stops the workers.
  void build_live(const char* statement) {
    auto t = start(2);
    t->apply(statement);
    await_status(*t, "dst", "live");
  }

  int64_t count(const std::string& statement) { return query(statement).get_int(0, 0); }

  // Worker options with ranges of 100 rows: many ranges per build.
  Options small_ranges(int drain_threads, bool staging = true) {
    Options o = options(drain_threads, staging);
    o.build_range_rows = 100;
    return o;
  }

  std::string phase() {
    auto r = query("SELECT coalesce(build_phase, '-') FROM trellis.transforms");
    return r.get(0, 0);
  }

  // A strict audit of dst: its rows and hidden state against the ledger
  // and a recompute of its definition.
  void expect_audit_converged(Trellis& t) {
    SelfCheckOptions o;
    o.mode = "strict";
    auto job = t.await_self_check(t.self_check("dst", o).id, std::chrono::seconds(60));
    ASSERT_TRUE(job.report.has_value()) << job.state << " " << job.error;
    std::string found;
    for (const auto& d : job.report->divergences)
      found += d.kind + " " + d.key + " " + d.column + " " + d.persisted.value_or("NULL") + " / " +
               d.recomputed.value_or("NULL") + "\n";
    EXPECT_EQ(job.report->outcome, "converged") << job.report->detail << "\n" << found;
  }

  // Kills the worker process inside its range, opens the gate and lets a
  // fresh process (one drain thread) finish the build: live, exact, audited.
  void kill_and_expect_a_fresh_worker_to_finish(ChildGuard& child, pg::Connection& gate,
                                                const Options& fresh_options) {
    child.kill_now();
    release(gate, kRangeGate);
    auto fresh = Trellis::connect(fresh_options);
    await_status(*fresh, "dst", "live");
    await_converged(*fresh);
    expect_oracle("dst");
    expect_audit_converged(*fresh);
  }

  bool await_parked(int64_t keys) {
    return eventually([&] { return count("SELECT count(*) FROM trellis.parked_keys") >= keys; },
                      std::chrono::seconds(30));
  }

  // Defines `statement` over a forked worker process and lets it go live,
  // then rebuilds it with key 7 changed under the open range (to a negative
  // value, whose re-derive waits on the discharge gate) and key 11 beside
  // it; kills the worker inside the discharge of those parked keys, and
  // lets a fresh process finish the build.
  void kill_inside_the_discharge(const std::string& statement) {
    ChildGuard child{fork_worker_process(options(2, /*staging=*/false))};
    ASSERT_GT(child.pid, 0);
    auto staging = start(0);
    staging->apply(statement);
    await_status(*staging, "dst", "live");
    auto range_gate = hold(kRangeGate);
    auto discharge_gate = hold(kDischargeGate);
    auto open = stage_open_change(7, -7000, 11, 11000);
    EXPECT_EQ(staging->request_backfill("public.src"), 1);
    ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
    open->exec("COMMIT");
    ASSERT_TRUE(await_parked(2));
    release(*range_gate, kRangeGate);
    ASSERT_TRUE(eventually([&] { return phase() == "parked"; }, std::chrono::seconds(30)));
    ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
    child.kill_now();
    EXPECT_EQ(phase(), "parked");
    // The discharge of key 7's slot rolled back (key 11's, on the other
    // thread, may have committed).
    EXPECT_EQ(count("SELECT count(*) FROM trellis.parked_keys WHERE key = '{7}'"), 1);
    release(*discharge_gate, kDischargeGate);

    auto fresh = start(2, /*staging=*/false);
    await_status(*fresh, "dst", "live");
    await_converged(*fresh);
    expect_oracle("dst");
  }

  // Rebuilds `statement` (live) with 12,000 keys changed under the open
  // range to negative values, whose re-derive waits on the discharge gate:
  // more than one discharge transaction takes (5,000 keys), so in the
  // parked phase both drain threads wait on the gate at once, each in the
  // discharge of its own key slots (with one thread discharging, one
  // waits). Then the build goes live with every key re-derived.
  void discharge_on_two_threads_at_once(const char* statement) {
    create_source(20000);
    auto t = start(2);
    t->apply(statement);
    await_status(*t, "dst", "live");
    auto range_gate = hold(kRangeGate);
    auto discharge_gate = hold(kDischargeGate);
    auto open = stage_open("UPDATE src SET v = -v WHERE id <= 12000",
                           "UPDATE src SET v = 90000 WHERE id = 19999");
    EXPECT_EQ(t->request_backfill("public.src"), 1);
    ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
    open->exec("COMMIT");
    ASSERT_TRUE(await_parked(12001));
    release(*range_gate, kRangeGate);
    auto waiting = [&] {
      return count(fmt::format(
          "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = "
          "{}",
          kDischargeGate));
    };
    EXPECT_TRUE(eventually([&] { return waiting() == 2; }, std::chrono::seconds(60)))
        << waiting() << " drain threads wait in a discharge";
    EXPECT_EQ(phase(), "parked");
    release(*discharge_gate, kDischargeGate);
    await_status(*t, "dst", "live");
    EXPECT_EQ(count("SELECT count(*) FROM trellis.parked_keys"), 0);
    await_converged(*t);
    expect_oracle("dst");
  }

  // Rebuilds `statement` (live) by ranges of 100 rows in a forked worker
  // whose two drain threads each hold one range open ((0, 100] and
  // (100, 200]: the frontier of ranges handed out is 200), then kills it:
  // its ranges roll back, their claims stay, and the frontier stays at 200.
  // With further claims held off (build_not_before, set by hand), changes
  // to keys 50 and 150 (at or below the frontier) and 1500 (beyond it) are
  // drained by a fresh process: it parks 50 and 150 and leaves 1500 to its
  // range, claimed after the page and reading the change under a later
  // snapshot. Then the build goes live with every change in.
  void keys_beyond_the_frontier_are_left_to_their_ranges(const char* statement) {
    create_source(2000);
    auto staging = start(0);
    staging->apply(statement);
    {
      auto builder = start(2, /*staging=*/false);
      await_status(*builder, "dst", "live");
    }
    auto gate = hold(kRangeGate);
    ChildGuard child{fork_worker_process(small_ranges(2, /*staging=*/false))};
    ASSERT_GT(child.pid, 0);
    EXPECT_EQ(staging->request_backfill("public.src"), 1);
    auto waiting = [&] {
      return count(fmt::format(
          "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = "
          "{}",
          kRangeGate));
    };
    ASSERT_TRUE(eventually([&] { return waiting() == 2; }, std::chrono::seconds(30)));
    child.kill_now();
    // Its backends wait on the gate and would notice only later.
    sql(fmt::format(
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND NOT "
        "granted AND objid = {}",
        kRangeGate));
    ASSERT_TRUE(eventually([&] { return waiting() == 0; }, std::chrono::seconds(30)));
    EXPECT_EQ(
        query("SELECT string_agg(hi::text, ' ' ORDER BY seq) FROM trellis.range_claims").get(0, 0),
        "{100} {200}");
    sql("UPDATE trellis.transforms SET build_not_before = now() + interval '1 hour'");
    sql("UPDATE src SET v = 5000 WHERE id = 50");
    sql("UPDATE src SET v = 1500 WHERE id = 150");
    sql("UPDATE src SET v = 15000 WHERE id = 1500");
    release(*gate, kRangeGate);
    auto drains = start(2, /*staging=*/false);
    ASSERT_TRUE(eventually(
        [&] {
          return count("SELECT count(*) FROM trellis.segments WHERE state = 'sealed'") == 0 &&
                 ready_buckets() == 0 && count("SELECT count(*) FROM trellis.parked_keys") >= 2;
        },
        std::chrono::seconds(30)));
    EXPECT_EQ(query("SELECT string_agg(key::text, ' ' ORDER BY key::text) FROM "
                    "trellis.parked_keys")
                  .get(0, 0),
              "{150} {50}");
    EXPECT_EQ(phase(), "ranges");
    sql("UPDATE trellis.transforms SET build_not_before = NULL");
    await_status(*drains, "dst", "live");
    EXPECT_EQ(count("SELECT count(*) FROM trellis.parked_keys"), 0);
    await_converged(*drains);
    expect_oracle("dst");
    expect_audit_converged(*drains);
  }

  // Leaves a transaction open that set v of key `id` (its change staged,
  // uncommitted), commits a change to key `other` beside it, and waits until
  // the segment holding both is sealed with its fence taken: that fence
  // passes only once the open transaction ends, so a range started now has
  // a snapshot without the change but does not hold the segment back.
  std::unique_ptr<pg::Connection> stage_open_change(int id, int v, int other, int other_v) {
    return stage_open(fmt::format("UPDATE src SET v = {} WHERE id = {}", v, id),
                      fmt::format("UPDATE src SET v = {} WHERE id = {}", other_v, other));
  }

  // The same for any statement left open and any committed beside it.
  std::unique_ptr<pg::Connection> stage_open(const std::string& open_sql,
                                             const std::string& committed_sql) {
    auto open = pg::Connection::open(url_, {.search_path = "public"});
    open->exec("BEGIN");
    open->exec(open_sql);
    sql(committed_sql);
    EXPECT_TRUE(eventually(
        [&] {
          return count(
                     "SELECT count(*) FROM trellis.segments WHERE state = 'sealed' AND fence IS "
                     "NOT NULL") > 0;
        },
        std::chrono::seconds(30)));
    return open;
  }
};

// request_backfill of a live target while a change to key 7 is uncommitted:
// the range's snapshot misses it, the change commits while the range is
// open and is drained then. Re-derived at once it would be overwritten by
// the range's older read; parked, it is re-derived after the range.
TEST_F(BuildRanges, AChangeCommittedUnderAnOpenRangeIsParkedThenRederived) {
  create_source(2000);
  auto t = start(2);
  t->apply(kDefine);
  await_status(*t, "dst", "live");
  auto gate = hold(kRangeGate);  // released (closed) before t stops its workers
  auto open = stage_open_change(7, 7000, 8, 8000);
  EXPECT_EQ(t->request_backfill("public.src"), 1);
  ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
  open->exec("COMMIT");
  ASSERT_TRUE(await_parked(2));
  EXPECT_EQ(phase(), "ranges");
  release(*gate, kRangeGate);
  await_status(*t, "dst", "live");
  EXPECT_EQ(count("SELECT count(*) FROM trellis.parked_keys"), 0);
  EXPECT_EQ(count("SELECT v FROM dst WHERE id = 7"), 7000);
  EXPECT_EQ(count("SELECT v FROM dst WHERE id = 8"), 8000);
  await_converged(*t);
  expect_oracle("dst");
}

// Over a join that fans out (orders 0 and 1, each joined to its 1,000 src
// rows), a src row changed under an open range is parked as its own key,
// not as its order's: the discharge maps it again and rewrites the pairs it
// reaches, where a parked order would rewrite all 1,000 of its rows.
TEST_F(BuildRanges, AFanningRowChangedUnderAnOpenRangeIsParkedAsItsOwnKey) {
  create_source(2000);
  sql("CREATE TABLE ord (id int PRIMARY KEY, note text);"
      "INSERT INTO ord SELECT g, 'o' || g FROM generate_series(0, 9) g");
  auto t = start(2);
  t->apply("TRANSFORM dst FROM ord o JOIN src s ON s.grp = o.id SELECT public.gate(s.v) AS v");
  await_status(*t, "dst", "live");
  auto gate = hold(kRangeGate);
  auto open = stage_open_change(7, 7000, 8, 8000);
  EXPECT_EQ(t->request_backfill("public.ord"), 1);
  ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
  open->exec("COMMIT");
  ASSERT_TRUE(await_parked(2));
  EXPECT_EQ(phase(), "ranges");
  auto parked_of = [&](const char* table) {
    return count(fmt::format(
        "SELECT count(*) FROM trellis.parked_keys k JOIN trellis.captured_tables c ON c.id = "
        "k.tbl WHERE c.table_name = '{}'",
        table));
  };
  EXPECT_EQ(parked_of("src"), 2);
  EXPECT_EQ(parked_of("ord"), 0);
  release(*gate, kRangeGate);
  await_status(*t, "dst", "live");
  EXPECT_EQ(count("SELECT count(*) FROM trellis.parked_keys"), 0);
  EXPECT_EQ(count("SELECT v FROM dst WHERE s_id = 7"), 7000);
  EXPECT_EQ(count("SELECT v FROM dst WHERE s_id = 8"), 8000);
  await_converged(*t);
  expect_oracle("dst");
}

// request_backfill over a target with a wrong cell, a missing row and an
// extra row: while the rewriting range is open, readers still see every row;
// afterwards the target equals its definition again.
TEST_F(BuildRanges, RebuildOverATamperedTargetKeepsServingItsRows) {
  create_source(2000);
  auto t = start(2);
  t->apply(kDefine);
  await_status(*t, "dst", "live");
  sql("UPDATE dst SET twice = 0 WHERE id = 1; DELETE FROM dst WHERE id = 2; INSERT INTO dst "
      "VALUES (99999, 1, 2)");
  auto gate = hold(kRangeGate);
  EXPECT_EQ(t->request_backfill("public.src"), 1);
  ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
  EXPECT_EQ(phase(), "ranges");
  EXPECT_EQ(count("SELECT count(*) FROM dst"), 2000);
  EXPECT_EQ(count("SELECT twice FROM dst WHERE id = 1"), 0);
  sql("UPDATE src SET v = 9000 WHERE id = 3");
  release(*gate, kRangeGate);
  await_status(*t, "dst", "live");
  await_converged(*t);
  expect_oracle("dst");
  EXPECT_EQ(count("SELECT count(*) FROM dst WHERE id IN (2, 99999)"), 1);
  EXPECT_EQ(count("SELECT v FROM dst WHERE id = 3"), 9000);
}

// A key held in quarantine is released (its source row fixed) while a
// rebuild by ranges is open: the release re-derives it beside the open
// range (which, the transform holding a key, goes by keyset chunks that
// leave the held key out), the fix is parked as well, and the rebuild
// converges with the key in place.
TEST_F(BuildRanges, AKeyReleasedDuringARebuildByRangesEndsInPlace) {
  create_source(200);
  sql("UPDATE src SET v = 3000 WHERE id = 30");  // v * 1000000 overflows int
  auto t = start(2);
  t->apply("TRANSFORM dst FROM src SELECT public.gate(v) AS v, v * 1000000 AS big");
  await_status(*t, "dst", "live");
  ASSERT_TRUE(eventually(
      [&] {
        auto s = t->status("dst");
        return s && s->held_keys && s->held_keys->count == 1;
      },
      std::chrono::seconds(60)));
  EXPECT_EQ(count("SELECT count(*) FROM dst"), 199);

  auto gate = hold(kRangeGate);
  EXPECT_EQ(t->request_backfill("public.src"), 1);
  ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
  EXPECT_EQ(phase(), "ranges");
  sql("UPDATE src SET v = -30 WHERE id = 30");  // gate(-30) waits on the other gate, not held
  // The transform holds a key, so the phase goes on by keyset chunks, and the
  // open chunk holds the locks of every key slot it covers (30's among
  // them): the release waits for that chunk to commit, then re-derives 30.
  std::thread releaser([&] { t->release_key("dst", "src", "[\"30\"]"); });
  bool waited = await_key_slot_wait(url_, std::chrono::seconds(30));
  release(*gate, kRangeGate);
  releaser.join();
  ASSERT_TRUE(waited);
  await_status(*t, "dst", "live");
  await_converged(*t);
  expect_oracle("dst");
  EXPECT_EQ(count("SELECT big FROM dst WHERE id = 30"), -30000000);
  EXPECT_FALSE(t->status("dst")->held_keys);
}

// The build's worker process is killed with SIGKILL inside a range of a
// fresh build: the range rolls back, and another process builds from the
// cursor, with the change committed meanwhile.
TEST_F(BuildRanges, WorkerKilledInsideARangeLosesNothing) {
  create_source(2000);
  ChildGuard child{fork_worker_process(options(2, /*staging=*/false))};
  ASSERT_GT(child.pid, 0);
  auto gate = hold(kRangeGate);
  auto staging = start(0);
  staging->apply(kDefine);
  ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
  EXPECT_EQ(phase(), "ranges");
  sql("UPDATE src SET v = 7000 WHERE id = 7; DELETE FROM src WHERE id = 8");
  child.kill_now();
  EXPECT_EQ(count("SELECT count(*) FROM dst"), 0);  // the range rolled back
  release(*gate, kRangeGate);

  auto fresh = start(2, /*staging=*/false);
  await_status(*fresh, "dst", "live");
  await_converged(*fresh);
  expect_oracle("dst");
  EXPECT_EQ(count("SELECT v FROM dst WHERE id = 7"), 7000);
}

// Killed inside the discharge of parked keys (after the range committed):
// the discharge rolls back, its keys stay parked, and the next process
// re-derives them before the transform goes live.
TEST_F(BuildRanges, WorkerKilledInsideTheDischargeLosesNothing) {
  create_source(2000);
  kill_inside_the_discharge(kDefine);
  EXPECT_EQ(count("SELECT v FROM dst WHERE id = 7"), -7000);
  EXPECT_EQ(count("SELECT v FROM dst WHERE id = 11"), 11000);
}

// Parked keys are discharged on every drain thread, each taking key slots
// no other thread holds (docs/architecture.md, "Building by ranges", step
// 5).
TEST_F(BuildRanges, ParkedKeysAreDischargedOnEveryDrainThread) {
  discharge_on_two_threads_at_once(kDefine);
  EXPECT_EQ(count("SELECT count(*) FROM dst WHERE v < 0"), 12000);
}

TEST_F(BuildRanges, AggregateParkedKeysAreDischargedOnEveryDrainThread) {
  discharge_on_two_threads_at_once(kDefineGroups);
}

// A change to a key beyond the ranges handed out is not parked: the range
// that holds it is claimed after the drain's page and reads it.
TEST_F(BuildRanges, AChangeBeyondTheRangesHandedOutIsLeftToItsRange) {
  keys_beyond_the_frontier_are_left_to_their_ranges(kDefine);
  EXPECT_EQ(count("SELECT v FROM dst WHERE id = 1500"), 15000);
  EXPECT_EQ(count("SELECT v FROM dst WHERE id = 50"), 5000);
}

TEST_F(BuildRanges, AggregateChangeBeyondTheRangesHandedOutIsLeftToItsRange) {
  keys_beyond_the_frontier_are_left_to_their_ranges(kDefineGroups);
  EXPECT_EQ(count("SELECT top FROM dst WHERE grp = 0"), 15000);
}

// The same for an aggregate: its ranges fill the ledger, the parked keys
// are re-derived, then every group is recomputed from the ledger.
TEST_F(BuildRanges, AggregateChangeCommittedUnderAnOpenRangeIsParkedThenRederived) {
  create_source(2000);
  auto t = start(2);
  t->apply(kDefineGroups);
  await_status(*t, "dst", "live");
  auto gate = hold(kRangeGate);
  auto open = stage_open_change(7, 7000, 8, 8000);
  sql("UPDATE dst SET total = 0 WHERE grp = 3");  // a group to repair
  EXPECT_EQ(t->request_backfill("public.src"), 1);
  ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
  open->exec("COMMIT");
  ASSERT_TRUE(await_parked(2));
  EXPECT_EQ(phase(), "ranges");
  EXPECT_EQ(count("SELECT count(*) FROM dst"), 10);  // the groups are still served
  release(*gate, kRangeGate);
  await_status(*t, "dst", "live");
  EXPECT_EQ(count("SELECT count(*) FROM trellis.parked_keys"), 0);
  EXPECT_EQ(count("SELECT top FROM dst WHERE grp = 8"), 8000);
  await_converged(*t);
  expect_oracle("dst");
}

// An aggregate's worker killed inside the discharge of its parked keys.
TEST_F(BuildRanges, AggregateWorkerKilledInsideTheDischargeLosesNothing) {
  create_source(2000);
  kill_inside_the_discharge(kDefineGroups);
}

// An aggregate's groups are written by ranges of the ledger while drains
// still park: a change committed under an open group range (which read the
// ledger before it) is parked and re-derived after the last group range.
// Applied at once, the group range's older read would overwrite it (the
// change is staged before the rebuild, its segment's fence taken, as in the
// tests above, so the open range does not hold the segment back). The
// rebuild also repairs a tampered group and deletes a group the ledger does
// not hold. The group range is held open by its own field: gate3(v) waits
// on the range gate for v = 3 only, so the drain of group 7 never waits.
TEST_F(BuildRanges, AggregateChangeCommittedUnderAnOpenGroupRangeIsParkedThenRederived) {
  create_source(2000);
  sql("CREATE FUNCTION gate3(x int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN IF x = 3 "
      "THEN PERFORM set_config('lock_timeout', '0', true); PERFORM "
      "pg_advisory_xact_lock_shared(4242); END IF; RETURN x; END $$");
  auto t = start(2);
  t->apply(
      "TRANSFORM dst FROM src GROUP BY grp SELECT SUM(v) AS total, COUNT(*) AS n, "
      "MAX(public.gate3(v)) AS top");
  await_status(*t, "dst", "live");
  sql("UPDATE dst SET total = 0 WHERE grp = 3");
  sql("INSERT INTO dst SELECT (jsonb_populate_record(d, jsonb_build_object('__group', "
      "ARRAY['99'], 'grp', 99))).* FROM dst d WHERE grp = 4");
  auto gate = hold(kRangeGate);
  auto open = stage_open_change(7, 7000, 8, 8000);
  EXPECT_EQ(t->request_backfill("public.src"), 1);
  ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
  EXPECT_EQ(phase(), "group_ranges");
  open->exec("COMMIT");
  ASSERT_TRUE(await_parked(2));
  EXPECT_EQ(count("SELECT count(*) FROM dst"), 11);  // the groups are still served
  release(*gate, kRangeGate);
  await_status(*t, "dst", "live");
  EXPECT_EQ(count("SELECT count(*) FROM trellis.parked_keys"), 0);
  EXPECT_EQ(count("SELECT top FROM dst WHERE grp = 7"), 7000);
  EXPECT_EQ(count("SELECT top FROM dst WHERE grp = 8"), 8000);
  EXPECT_EQ(count("SELECT count(*) FROM dst WHERE grp = 99"), 0);
  await_converged(*t);
  expect_oracle("dst");
}

// A state-only aggregate (COUNT, SUM, AVG) with few groups folds its ledger
// into its groups by ranges of the ledger's heap blocks, not by ranges of
// the group index: with ranges of 100 entries (one block each) and the fold
// held open by the gate its SUM reads, the claims are block ranges. The
// groups and their hidden state equal the ledger's; a rebuild over the live
// target (not empty: group ranges) leaves it equal too, nothing added twice.
// Its drain reads no group index, and nothing here reads by group: the
// ledger has its key alone, and changes after the rebuild still converge.
TEST_F(BuildRanges, AFewGroupsStateOnlyAggregateFoldsItsLedgerByHeapBlocks) {
  create_source(2000);
  std::unique_ptr<pg::Connection> gate;
  auto t = define_fold_held_in_its_group_phase(gate);
  EXPECT_GT(claims("hi[1] = 'ctid'"), 0);
  EXPECT_EQ(claims("lo IS NOT NULL AND lo[1] <> 'ctid'"), 0);
  release_and_expect_live_and_exact(gate, *t);
  EXPECT_EQ(ledger_indexes(), 1);
  EXPECT_EQ(ledger_group_indexes(), 0);
  rebuild_after_changes_and_expect_exact(*t);
  EXPECT_EQ(ledger_group_indexes(), 0);
  sql("UPDATE src SET grp = (grp + 3) % 10, v = v - 1 WHERE id % 5 = 0; DELETE FROM src WHERE id "
      "% 13 = 0; INSERT INTO src SELECT g, g, g % 12 FROM generate_series(2001, 2100) g");
  await_converged(*t);
  expect_oracle("dst");
  expect_audit_converged(*t);
}

// The same definition over 1,500 groups (more than a fold takes): the
// fresh build's ledger has no group index when the phase starts, so the
// choice is made from a sample of its heap, and it goes by group ranges.
// Its entries are more than 200 ranges of 100 hold
// (compile::kSplitLedgerMaxRanges), so the ranges are bounded by the
// group index: several claims, the first one's upper bound a group. That
// read creates the group index, which its drain does not need.
TEST_F(BuildRanges, AManyGroupsStateOnlyAggregateWritesItsGroupsByRanges) {
  create_source((compile::kSplitLedgerMaxRanges + 10) * 100, 1500);
  std::unique_ptr<pg::Connection> gate;
  auto t = define_fold_held_in_its_group_phase(gate);
  EXPECT_TRUE(eventually([&] { return claims("true") > 1; }, std::chrono::seconds(30)));
  EXPECT_EQ(claims("lo IS NULL AND hi IS NOT NULL"), 1);
  EXPECT_EQ(claims("hi[1] = 'ctid' OR lo[1] = 'ctid'"), 0);
  EXPECT_EQ(ledger_group_indexes(), 1);
  release_and_expect_live_and_exact(gate, *t);
  EXPECT_EQ(ledger_indexes(), 2);
}

// A definition whose drain reads its ledger by group (MAX is recomputed
// from the ledger's entries) splits only a ledger of at most 20 ranges'
// worth (compile::kSplitIndexedLedgerMaxRanges): its group index is
// created anyway. With 3,000 entries (30 ranges of 100) its group phase
// goes by ranges of that index, created by the first claim: held open by
// the gate its SUM reads, the index is there (parts would run before any
// index, both threads in them), and the first claim is bounded above by a
// group. Then the build goes live, exact.
TEST_F(BuildRanges, ALedgerReadByGroupIsSplitOnlyWhenSmall) {
  create_source(3000, 1500);
  auto gate = hold(kRangeGate);
  auto t = Trellis::connect(small_ranges(2));
  t->apply(
      "TRANSFORM dst FROM src GROUP BY grp SELECT SUM(public.gate(v)) AS total, MAX(v) AS top");
  ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
  EXPECT_EQ(phase(), "group_ranges");
  EXPECT_EQ(ledger_group_indexes(), 2);  // the group's, and MAX's (group, v)
  EXPECT_EQ(claims("lo IS NULL AND hi IS NOT NULL"), 1);
  release_and_expect_live_and_exact(gate, *t);
}

// A ledger of at most 200 ranges' worth of entries (here 1,800, ranges of
// 100) is split into a part per drain thread by a sample of its groups,
// each part one GROUP BY over the ledger's heap: two claims, the first
// bounded above by a group and below by nothing, the second from that group
// to the end, both taken before the ledger has any index and run at once
// (each waits on the gate its SUM reads). No group index is created: the
// definition's drain does not read one. Then the groups, their hidden state
// and the oracle agree, and a rebuild over the live target splits again.
TEST_F(BuildRanges, AFewEntriesAggregateSplitsItsLedgerIntoAPartPerThread) {
  create_source(1800, 1500);
  std::unique_ptr<pg::Connection> gate;
  auto t = define_fold_held_in_its_group_phase(gate);
  EXPECT_TRUE(eventually([&] { return gate_waits() == 2; }, std::chrono::seconds(30)));
  EXPECT_EQ(claims("NOT done"), 2);
  EXPECT_EQ(claims("lo IS NULL AND hi IS NOT NULL"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM trellis.range_claims a JOIN trellis.range_claims b ON "
                  "b.lo = a.hi WHERE a.lo IS NULL AND b.hi IS NULL"),
            1);
  EXPECT_EQ(ledger_indexes(), 0);
  EXPECT_EQ(phase(), "group_ranges");
  release_and_expect_live_and_exact(gate, *t);
  expect_audit_converged(*t);
  EXPECT_EQ(ledger_indexes(), 1);
  EXPECT_EQ(ledger_group_indexes(), 0);
  rebuild_after_changes_and_expect_exact(*t);
  EXPECT_EQ(ledger_indexes(), 1);
}

// The thread whose part is done first finds every part claimed and creates
// the ledger's key index beside the other part: here the gate holds only
// the part that holds group 7 (its SUM waits on group 7's first entry),
// so the other part commits, and the key index is there while group 7's
// part still waits. Then the build goes live, exact.
TEST_F(BuildRanges, AThreadWhosePartIsDoneIndexesTheLedgerBesideTheOtherPart) {
  create_source(1800, 1500);
  sql("CREATE FUNCTION gate_in(x int, g int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN "
      "IF g = 7 THEN PERFORM set_config('lock_timeout', '0', true); PERFORM "
      "pg_advisory_xact_lock_shared(" +
      std::to_string(kRangeGate) + "); END IF; RETURN x; END $$");
  auto gate = hold(kRangeGate);
  auto t = Trellis::connect(small_ranges(2));
  t->apply(
      "TRANSFORM dst FROM src GROUP BY grp SELECT SUM(public.gate_in(v, grp)) AS total, COUNT(*) "
      "AS n, AVG(v) AS mean");
  ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
  EXPECT_TRUE(eventually([&] { return claims("done") == 1; }, std::chrono::seconds(30)));
  EXPECT_TRUE(eventually([&] { return ledger_indexes() == 1; }, std::chrono::seconds(30)));
  EXPECT_EQ(claims("NOT done"), 1);
  EXPECT_EQ(gate_waits(), 1);
  EXPECT_EQ(phase(), "group_ranges");
  release_and_expect_live_and_exact(gate, *t);
  EXPECT_EQ(ledger_indexes(), 1);
}

// A worker with one drain thread splits its ledger into one part, the
// whole ledger. Killed inside that range (held open by the gate its SUM
// reads): the range rolls back with its claim, the next process takes the
// claim over and reruns it whole, and every group and its hidden state
// equal the ledger's.
TEST_F(BuildRanges, AWorkerKilledInsideTheWholeLedgersRangeLosesNothing) {
  create_source(1800, 1500);
  auto gate = hold(kRangeGate);
  ChildGuard child{0};
  auto staging = define_over_a_worker_held_by_the_gate(kDefineFold, child);
  EXPECT_EQ(phase(), "group_ranges");
  EXPECT_EQ(claims("lo IS NULL AND hi IS NULL AND NOT done"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM dst"), 0);
  kill_and_expect_a_fresh_worker_to_finish(child, *gate, small_ranges(1, /*staging=*/false));
}

// A worker with two drain threads killed while both parts of its ledger
// run (each held open by the gate its SUM reads): both roll back with their
// claims, a process with one thread takes both over, and every group is
// written once, exact.
TEST_F(BuildRanges, AWorkerKilledInsideBothPartsOfItsLedgerLosesNothing) {
  create_source(1800, 1500);
  auto gate = hold(kRangeGate);
  ChildGuard child{fork_worker_process(small_ranges(2, /*staging=*/false))};
  ASSERT_GT(child.pid, 0);
  auto staging = start(0);
  staging->apply(kDefineFold);
  ASSERT_TRUE(eventually([&] { return gate_waits() == 2; }, std::chrono::seconds(30)));
  EXPECT_EQ(phase(), "group_ranges");
  EXPECT_EQ(claims("NOT done"), 2);
  kill_and_expect_a_fresh_worker_to_finish(child, *gate, small_ranges(1, /*staging=*/false));
}

// A worker killed inside a fold range, after earlier ranges were folded:
// its range rolls back with its claim, the claim is taken over, and every
// entry is added once. gate_at(v) holds only the range whose block holds
// v = 1500.
TEST_F(BuildRanges, AWorkerKilledInsideAFoldRangeLosesNothing) {
  create_source(2000);
  sql("CREATE FUNCTION gate_at(x int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN IF x = "
      "1500 THEN PERFORM set_config('lock_timeout', '0', true); PERFORM "
      "pg_advisory_xact_lock_shared(4242); END IF; RETURN x; END $$");
  auto gate = hold(kRangeGate);
  Options o = small_ranges(1, /*staging=*/false);
  ChildGuard child{fork_worker_process(o)};
  ASSERT_GT(child.pid, 0);
  auto staging = start(0);
  staging->apply(
      "TRANSFORM dst FROM src GROUP BY grp SELECT SUM(public.gate_at(v)) AS total, "
      "COUNT(*) AS n");
  ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
  EXPECT_EQ(phase(), "group_ranges");
  EXPECT_GT(count("SELECT count(*) FROM trellis.range_claims WHERE done AND hi[1] = 'ctid'"), 0);
  EXPECT_GT(count("SELECT count(*) FROM dst"), 0);  // earlier ranges folded
  child.kill_now();
  EXPECT_EQ(count("SELECT count(*) FROM trellis.range_claims WHERE NOT done AND lo[1] = 'ctid'"),
            1);
  release(*gate, kRangeGate);
  auto fresh = Trellis::connect(o);
  await_status(*fresh, "dst", "live");
  await_converged(*fresh);
  expect_oracle("dst");
  expect_audit_converged(*fresh);
}

// Ranges are claimed by every drain thread: with ranges of 100 rows and
// both threads' ranges held open by the gate, two range statements wait at
// once, each on a claim of its own. A thread killed with its claim (the
// worker process) leaves it to the next claimer; the build still converges.
TEST_F(BuildRanges, RangesRunOnEveryDrainThreadAtOnce) {
  create_source(2000);
  auto gate = hold(kRangeGate);
  auto t = Trellis::connect(small_ranges(2));
  t->apply(kDefine);
  ASSERT_TRUE(eventually([&] { return gate_waits() == 2; }, std::chrono::seconds(30)));
  EXPECT_EQ(count("SELECT count(*) FROM trellis.range_claims WHERE NOT done AND owner_pid IN "
                  "(SELECT l.pid FROM pg_locks l WHERE NOT l.granted AND l.locktype = "
                  "'advisory')"),
            2);
  release(*gate, kRangeGate);
  await_status(*t, "dst", "live");
  EXPECT_EQ(count("SELECT count(*) FROM trellis.range_claims"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM trellis.range_frontiers"), 0);
  await_converged(*t);
  expect_oracle("dst");
}

// Two worker processes share one build's ranges; one is killed with a
// range open (its claim's backend gone), the other takes the claim over.
TEST_F(BuildRanges, AClaimOfAKilledWorkerIsTakenOver) {
  create_source(2000);
  auto gate = hold(kRangeGate);
  ChildGuard child{0};
  auto staging = define_over_a_worker_held_by_the_gate(kDefine, child);
  child.kill_now();
  EXPECT_EQ(count("SELECT count(*) FROM trellis.range_claims WHERE NOT done"), 1);
  release(*gate, kRangeGate);
  auto fresh = Trellis::connect(small_ranges(1, /*staging=*/false));
  await_status(*fresh, "dst", "live");
  await_converged(*fresh);
  expect_oracle("dst");
  EXPECT_EQ(count("SELECT count(*) FROM dst"), 2000);
}

// A build by ranges that an earlier version left part-way (one range at a
// time, its cursor in the transforms row, rows up to it written) goes on
// from that cursor: the first claim starts there, in insert mode, and the
// target ends complete.
TEST_F(BuildRanges, ABuildOfAnEarlierVersionGoesOnFromItsCursor) {
  create_source(2000);
  build_live(kDefine);
  sql("DELETE FROM dst WHERE id > 1000");
  sql("UPDATE trellis.transforms SET status = 'backfilling', build_phase = 'ranges', "
      "build_cursor = ARRAY['1000'], build_fence = now(), build_sweep_target = false, "
      "build_rows_done = 1000");
  auto gate = hold(kRangeGate);
  auto t = Trellis::connect(small_ranges(2));
  ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
  EXPECT_EQ(query("SELECT min(lo)::text FROM trellis.range_claims").get(0, 0), "{1000}");
  release(*gate, kRangeGate);
  await_status(*t, "dst", "live");
  await_converged(*t);
  expect_oracle("dst");
  // 1,000 before, 1,000 written by the claims after the cursor.
  EXPECT_EQ(count("SELECT build_rows_done FROM trellis.transforms"), 2000);
}

// An aggregate build that an earlier version left in its old `parked`
// phase (parked keys discharged before a groups phase that has not run):
// migration 0006 sends it back to `group_ranges` in rewrite mode, so its
// groups are written from the ledger, its parked keys re-derived after
// them, and it converges. The earlier state is made by hand: a live
// target with a wrong group and a missing one, the ledger complete, a key
// parked, and the phase `parked`.
TEST_F(BuildRanges, AnAggregateBuildLeftInTheOldParkedPhaseIsFinishedByGroupRanges) {
  create_source(2000);
  build_live(kDefineGroups);
  sql("UPDATE dst SET total = 0 WHERE grp = 3");
  sql("DELETE FROM dst WHERE grp = 4");
  sql("UPDATE src SET v = 5000 WHERE id = 5");  // not drained: no workers run
  sql("INSERT INTO trellis.parked_keys SELECT id, source_table_id, ARRAY['5'] FROM "
      "trellis.transforms");
  sql("UPDATE trellis.transforms SET status = 'backfilling', build_phase = 'parked', "
      "build_cursor = NULL, build_fence = now(), build_sweep_target = false");
  rerun_migration(6);
  EXPECT_EQ(phase(), "group_ranges");
  auto t = start(2);
  await_status(*t, "dst", "live");
  await_converged(*t);
  expect_oracle("dst");
  EXPECT_EQ(count("SELECT count(*) FROM trellis.parked_keys"), 0);
}

// An aggregate's fresh build writes its ledger bare and indexes it once
// (docs/architecture.md, "Building by ranges", the ledger's indexes). The
// ledger of a build interrupted inside its ranges holds what the committed
// ranges wrote and no index; `between` then runs with no worker, and a
// fresh process finishes the build.
class LedgerIndexes : public BuildRanges {
 protected:
  // Ranges of 100 rows; v < 0 (ids 1-500) passes the range gate, so five
  // ranges commit before both threads wait on it. Their process is killed.
  void interrupt_inside_the_ranges() {
    sql(kGateFunction);
    sql("CREATE TABLE src (id int PRIMARY KEY, v int NOT NULL, grp int NOT NULL)");
    sql("CREATE INDEX ON src (grp)");
    sql("INSERT INTO src SELECT g, CASE WHEN g <= 500 THEN -g ELSE g END, g % 10 FROM "
        "generate_series(1, 2000) g");
    ChildGuard child{fork_worker_process(small_ranges(2, /*staging=*/false))};
    ASSERT_GT(child.pid, 0);
    gate_ = hold(kRangeGate);
    auto staging = start(0);
    staging->apply(kDefineGroups);
    ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM dst__ledger") == 500; },
                           std::chrono::seconds(30)));
    ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
    child.kill_now();
    EXPECT_EQ(phase(), "ranges");
    EXPECT_EQ(count("SELECT count(*) FROM dst__ledger"), 500);
    EXPECT_EQ(ledger_indexes(), 0);
  }

  void release_the_ranges() { release(*gate_, kRangeGate); }

  int64_t ledger_indexes(const std::string& filter = "true") {
    return count("SELECT count(*) FROM pg_index WHERE indrelid = 'dst__ledger'::regclass AND " +
                 filter);
  }

  // Its key (unique, on id), its group index and its MAX(v) index, once each.
  void expect_indexed_once() {
    EXPECT_EQ(ledger_indexes(), 3);
    EXPECT_EQ(ledger_indexes("indisunique AND indnatts = 1 AND indkey[0] = (SELECT attnum FROM "
                             "pg_attribute WHERE attrelid = indrelid AND attname = 'id')"),
              1);
    EXPECT_EQ(ledger_indexes("indkey[0] = (SELECT attnum FROM pg_attribute WHERE attrelid = "
                             "indrelid AND attname = '__ledger_group')"),
              2);
  }

  std::unique_ptr<pg::Connection> gate_;
};

TEST_F(LedgerIndexes, AFreshBuildIndexesItsLedgerOnceItsRangesAreDone) {
  interrupt_inside_the_ranges();
  sql("UPDATE src SET v = -7000 WHERE id = 7; DELETE FROM src WHERE id = 8");
  release_the_ranges();
  auto fresh = start(2, /*staging=*/true);
  await_status(*fresh, "dst", "live");
  expect_indexed_once();
  sql("UPDATE src SET v = v + 1 WHERE id % 7 = 0; DELETE FROM src WHERE id % 11 = 0");
  await_converged(*fresh);
  expect_oracle("dst");
  expect_audit_converged(*fresh);
}

// PAUSE and RESUME of a build whose ledger has no index yet: the rebuild
// upserts into the ledger, so it creates the indexes first.
TEST_F(LedgerIndexes, ABuildResumedBeforeItsLedgerHasIndexesCreatesThemFirst) {
  interrupt_inside_the_ranges();
  // The killed process's backends end once their ranges no longer wait
  // (rolled back: their client is gone); PAUSE waits for them.
  release_the_ranges();
  auto api = start(0);
  api->apply("PAUSE TRANSFORM dst");
  api->apply("RESUME TRANSFORM dst");
  EXPECT_EQ(count("SELECT count(*) FROM dst__ledger"), 500);
  EXPECT_EQ(ledger_indexes(), 0);
  // The rebuild's ranges over ids 1-500 rewrite; the next waits on the gate.
  gate_ = hold(kRangeGate);
  auto fresh = start(2, /*staging=*/false);  // `api` stages
  ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "advisory"));
  EXPECT_EQ(phase(), "ranges");
  EXPECT_FALSE(query("SELECT chunked FROM trellis.range_frontiers").get_bool(0, 0));
  expect_indexed_once();
  release_the_ranges();
  await_status(*fresh, "dst", "live");
  expect_indexed_once();
  await_converged(*fresh);
  expect_oracle("dst");
}

// The worker is killed while its first group claim waits to create the
// group index (a session holds a lock on the ledger that CREATE INDEX waits
// for): the claim's transaction rolls back whole, and the next process
// creates the indexes once and builds the groups.
TEST_F(LedgerIndexes, AWorkerKilledWhileIndexingTheLedgerLosesNothing) {
  create_source(2000);
  ChildGuard child{fork_worker_process(small_ranges(2, /*staging=*/false))};
  ASSERT_GT(child.pid, 0);
  gate_ = hold(kRangeGate);
  auto staging = start(0);
  staging->apply(kDefineGroups);
  auto blocker = pg::Connection::open(url_, {.search_path = "public"});
  blocker->exec("BEGIN");
  blocker->exec("LOCK TABLE dst__ledger IN ROW EXCLUSIVE MODE");  // the ranges still insert
  release_the_ranges();
  ASSERT_TRUE(await_trellis_lock_wait(url_, std::chrono::seconds(30), "relation"));
  EXPECT_EQ(phase(), "group_ranges");
  EXPECT_EQ(count("SELECT count(*) FROM dst__ledger"), 2000);
  child.kill_now();
  blocker->exec("COMMIT");
  auto fresh = start(2, /*staging=*/false);  // `staging` stages
  await_status(*fresh, "dst", "live");
  expect_indexed_once();
  sql("UPDATE src SET v = v + 1 WHERE id % 7 = 0");
  await_converged(*fresh);
  expect_oracle("dst");
  expect_audit_converged(*fresh);
}

// A duplicate ledger key (made by hand here) fails the key's creation at
// the end of the group ranges: the build reports it as its failure, names
// the index, retries, and goes live once the duplicate is gone.
TEST_F(LedgerIndexes, AFailureToIndexTheLedgerIsTheBuildsReportedFailure) {
  interrupt_inside_the_ranges();
  sql("INSERT INTO dst__ledger SELECT * FROM dst__ledger WHERE id = 1");
  sql("UPDATE dst__ledger SET \"__present\" = false WHERE ctid = (SELECT max(ctid) FROM "
      "dst__ledger WHERE id = 1)");
  release_the_ranges();
  auto fresh = start(2, /*staging=*/true);
  std::optional<Status> s;
  ASSERT_TRUE(eventually(
      [&] {
        s = fresh->status("dst");
        return s && s->backfill_failure.has_value();
      },
      std::chrono::seconds(30)));
  EXPECT_EQ(s->backfill_failure->chunk, "the ledger's indexes, at the end of phase group_ranges");
  EXPECT_NE(s->backfill_failure->error.find("dst__ledger"), std::string::npos)
      << s->backfill_failure->error;
  EXPECT_EQ(s->status, "backfilling");
  sql("DELETE FROM dst__ledger WHERE NOT \"__present\"");
  await_status(*fresh, "dst", "live");
  EXPECT_FALSE(fresh->status("dst")->backfill_failure);
  expect_indexed_once();
  await_converged(*fresh);
  expect_oracle("dst");
}

}  // namespace trellis::test
