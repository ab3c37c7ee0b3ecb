// Runs one generated episode; see episode.hpp.
#include "generative/episode.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <set>
#include <thread>

#include "generative/write_stream.hpp"
#include "pg/connection.hpp"
#include "trellis/trellis.hpp"

namespace trellis::gen {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kWait = std::chrono::seconds(180);

std::string describe_status(const Status& s) {
  std::string out = s.target + ": " + s.status;
  if (s.backfill_failure) out += " backfill_failure=" + s.backfill_failure->error;
  if (s.drain_failure) out += " drain_failure=" + s.drain_failure->error;
  if (s.capture_failure) out += " capture_failure=" + s.capture_failure->error;
  if (s.capture_wait) out += " capture_wait=" + s.capture_wait->table;
  if (s.held_keys) out += fmt::format(" held_keys={}", s.held_keys->count);
  for (const auto& gap : s.source_index_gaps) out += " source_index_gap=" + gap.table;
  return out;
}

// A failed step: what went wrong, reported with the whole program.
struct StepFailure {
  std::string what;
};

class Runner {
 public:
  Runner(const Generated& g, const EpisodeHooks& hooks)
      : g_(g), hooks_(hooks), fleet_(hooks.url, hooks.worker_log) {}

  const std::string& log() const { return log_; }
  int failed_step() const { return failed_step_; }
  const std::string& what() const { return what_; }

  std::string run() {
    size_t step = 0;
    try {
      app_ = open_app();
      app_->exec_script(g_.schema.ddl() + g_.rows_sql());
      for (const auto& w : g_.plan.workers) fleet_.spawn(w);
      Options o;
      o.url = hooks_.url;
      api_ = Trellis::connect(o);
      for (; step < g_.plan.steps.size(); ++step) execute(g_.plan.steps[step]);
      fleet_.kill_all();
      check_the_judge();
      return "";
    } catch (const StepFailure& f) {
      return report(step, f.what);
    } catch (const std::exception& e) {
      return report(step, std::string("unexpected error: ") + e.what());
    }
  }

 private:
  std::unique_ptr<pg::Connection> open_app() {
    return pg::Connection::open(hooks_.url,
                                {.search_path = "public", .application_name = "generative_app"});
  }

  void log(const std::string& line) { log_ += "  " + line + "\n"; }

  const Transform& transform(int t) const { return g_.program.transforms[static_cast<size_t>(t)]; }

  std::string report(size_t step, const std::string& what) {
    failed_step_ = step < g_.plan.steps.size() ? static_cast<int>(step) + 1 : 0;
    what_ = what;
    std::string all;
    if (api_) {
      try {
        for (const auto& s : api_->status_all()) all += "  " + describe_status(s) + "\n";
      } catch (const std::exception& e) {
        all = std::string("  (status unavailable: ") + e.what() + ")\n";
      }
    }
    fleet_.kill_all();
    return fmt::format(
        "generative failure, seed {0} (replay: {8})\n"
        "failed in step {1}: {2}\n{3}\n"
        "--- statuses ---\n{4}--- what ran ---\n{5}{6}worker logs: {7}\n",
        g_.seed, step + 1,
        step < g_.plan.steps.size() ? g_.plan.steps[step].describe(g_.schema, g_.program) : "setup",
        what, all, log_, g_.describe(), hooks_.worker_log, g_.replay_env());
  }

  void execute(const Step& s) {
    switch (s.kind) {
      case Step::Kind::define:
        define(s.transform);
        break;
      case Step::Kind::burst:
        burst(s);
        break;
      case Step::Kind::quiesce:
        quiesce();
        break;
    }
  }

  // Applies a Trellis statement, retrying while the server restarts (and,
  // when `retry_conflicts`, while a concurrent edit or a lock on the target
  // refuses it); when a retry finds the statement already took effect it is
  // done.
  void apply(const std::string& statement, const std::function<bool()>& done,
             bool retry_conflicts = false) {
    for (int attempt = 0;; ++attempt) {
      try {
        api_->apply(statement);
        return;
      } catch (const Error& e) {
        bool transient = e.code() == ErrorCode::connectivity || e.code() == ErrorCode::timeout ||
                         e.code() == ErrorCode::internal ||
                         (retry_conflicts && e.code() == ErrorCode::conflict);
        if (attempt > 0 && done()) return;
        if (!transient || attempt >= 20) throw StepFailure{statement + " failed: " + e.what()};
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  }

  std::string status_of(const std::string& target) {
    auto s = api_->status(target);
    return s ? s->status : "(none)";
  }

  void await_live(int t) {
    const std::string& name = transform(t).name;
    auto deadline = Clock::now() + kWait;
    std::optional<Status> last;
    while (Clock::now() < deadline) {
      try {
        last = api_->status(name);
      } catch (const Error&) {
        last.reset();  // the server is coming back
      }
      if (last && last->status == "live") return;
      if (last && (last->status == "paused" || last->status == "quarantined"))
        throw StepFailure{name + " is " + describe_status(*last) + " instead of live"};
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    throw StepFailure{fmt::format("{} not live within {}s: {}", name, kWait.count(),
                                  last ? describe_status(*last) : "(no status)")};
  }

  // Adds a field over the first column of the transform's source (any
  // type: `IS NULL` never fails), or drops the one added before.
  void alter(int t) {
    const Transform& tr = transform(t);
    std::string first_column;
    if (tr.upstream >= 0) {
      first_column = transform(tr.upstream).target.columns.front().name;
    } else {
      for (const auto& table : g_.schema.tables)
        if (table.name == tr.source) first_column = table.columns.front().name;
      // Over a join its bare name may be ambiguous.
      if (!tr.alias.empty()) first_column = tr.alias + "." + first_column;
    }
    bool drop = altered_.count(t) > 0;
    std::string statement =
        "ALTER TRANSFORM " + tr.name +
        (drop ? " DROP gen_added" : " ADD (" + first_column + " IS NULL) AS gen_added");
    // The edit is idempotent: a retry after it took effect changes nothing.
    apply(
        statement, [] { return false; }, true);
    if (drop)
      altered_.erase(t);
    else
      altered_.insert(t);
    log(statement);
  }

  void define(int t) {
    const Transform& tr = transform(t);
    altered_.erase(t);
    if (tr.upstream >= 0) await_live(tr.upstream);
    if (!tr.prepare.empty()) app_->exec_script(tr.prepare);
    apply(tr.statement, [&] { return status_of(tr.name) != "(none)"; });
    defined_.insert(t);
    log("defined " + tr.name);
  }

  void burst(const Step& s) {
    WriteStream writes(hooks_.url, g_.schema, s.writer_seeds(), s.ops_each);
    for (const auto& f : s.faults) {
      int threshold = writes.total() * f.at_percent / 100;
      while (writes.done() < threshold && !writes.finished())
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      fault(f);
    }
    writes.join();
    log(fmt::format("burst done: {} transactions, {} failed (clashes, deadlocks, restarts)",
                    writes.total(), writes.failed()));
  }

  void fault(const Fault& f) {
    switch (f.kind) {
      case Fault::Kind::kill_worker:
        kill_worker(f);
        break;
      case Fault::Kind::restart_fast:
      case Fault::Kind::restart_immediate: {
        bool immediate = f.kind == Fault::Kind::restart_immediate;
        app_.reset();
        hooks_.restart_server(immediate);
        app_ = open_app();
        log(immediate ? "immediate restart" : "fast restart");
        break;
      }
      case Fault::Kind::join_worker:
        if (fleet_.size() >= 5) {
          log("join skipped: five worker processes already run");
          break;
        }
        fleet_.spawn(f.spec);
        log("joined [" + f.spec.describe() + "]");
        break;
      case Fault::Kind::pause:
        apply("PAUSE TRANSFORM " + transform(f.target).name,
              [&] { return status_of(transform(f.target).name) == "paused"; });
        paused_.insert(f.target);
        waiting_.erase(f.target);
        log("paused " + transform(f.target).name);
        break;
      case Fault::Kind::resume: {
        apply("RESUME TRANSFORM " + transform(f.target).name,
              [&] { return status_of(transform(f.target).name) != "paused"; });
        paused_.erase(f.target);
        int up = transform(f.target).upstream;
        bool waits = up >= 0 && (paused_.count(up) || waiting_.count(up));
        if (waits) waiting_.insert(f.target);
        settle_waits();
        log("resumed " + transform(f.target).name +
            (waits ? " (it waits for its upstream " + transform(up).name + ")" : ""));
        break;
      }
      case Fault::Kind::truncate:
        truncate(g_.schema.tables[static_cast<size_t>(f.target)].name);
        break;
      case Fault::Kind::truncate_partition:
        truncate(g_.schema.tables[static_cast<size_t>(f.target)].partition(f.partition));
        break;
      case Fault::Kind::reattach_partition:
        reattach(f);
        break;
      case Fault::Kind::define:
        define(f.target);
        break;
      case Fault::Kind::alter:
        alter(f.target);
        break;
      case Fault::Kind::drop:
        apply("DROP TRANSFORM " + transform(f.target).name,
              [&] { return status_of(transform(f.target).name) == "(none)"; });
        paused_.erase(f.target);
        defined_.erase(f.target);
        altered_.erase(f.target);
        log("dropped " + transform(f.target).name);
        break;
    }
  }

  void truncate(const std::string& table) {
    try {
      app_->exec_script("TRUNCATE " + table);
      log("truncated " + table);
    } catch (const std::exception& e) {
      // A deadlock with a writer's transaction is the application's business.
      log("TRUNCATE " + table + " failed: " + e.what());
      app_ = open_app();
    }
  }

  // Detaches one partition, deletes a row of it (staged by its own triggers
  // and drained while its rows are away from the root), and attaches it
  // again. A DETACH that fails (a deadlock with a writer) is the
  // application's business; an ATTACH is retried until it lands, so the
  // table keeps its partitions.
  void reattach(const Fault& f) {
    const Table& t = g_.schema.tables[static_cast<size_t>(f.target)];
    std::string leaf = t.partition(f.partition);
    try {
      app_->exec_script(fmt::format("ALTER TABLE {} DETACH PARTITION {}{}", t.name, leaf,
                                    f.concurrently ? " CONCURRENTLY" : ""));
    } catch (const std::exception& e) {
      log("DETACH PARTITION " + leaf + " failed: " + e.what());
      app_ = open_app();
      // A concurrent detach that failed half-way is finished by FINALIZE.
      try {
        app_->exec_script(fmt::format("ALTER TABLE {} DETACH PARTITION {} FINALIZE", t.name, leaf));
      } catch (const std::exception&) {
        app_ = open_app();
        if (app_->exec("SELECT count(*) FROM pg_inherits WHERE inhrelid = '" + leaf + "'::regclass")
                .get_int(0, 0) > 0)
          return;  // still attached: nothing happened
      }
    }
    try {
      app_->exec_script("DELETE FROM " + leaf + " WHERE ctid = (SELECT min(ctid) FROM " + leaf +
                        ")");
    } catch (const std::exception&) {
      app_ = open_app();
    }
    for (int attempt = 0;; ++attempt) {
      try {
        app_->exec_script(fmt::format(
            "ALTER TABLE {} ATTACH PARTITION {} FOR VALUES WITH (MODULUS {}, REMAINDER {})", t.name,
            leaf, t.partitions, f.partition));
        break;
      } catch (const std::exception& e) {
        app_ = open_app();
        if (attempt >= 50) throw;
        // Writes straight into it while it was away may have moved rows
        // out of its bounds: those rows go (the application's own cleanup).
        try {
          app_->exec_script(fmt::format(
              "DELETE FROM {} WHERE NOT satisfies_hash_partition('{}'::regclass, {}, {}, id)", leaf,
              t.name, t.partitions, f.partition));
        } catch (const std::exception&) {
          app_ = open_app();
        }
      }
    }
    log("detached " + leaf + (f.concurrently ? " concurrently" : "") + " and attached it again");
  }

  // Holds an exclusive lock on a live target until a drain waits for it
  // (so a page transaction is open), then kills the worker with SIGKILL.
  void kill_worker(const Fault& f) {
    if (fleet_.size() == 0) {
      fleet_.spawn(f.spec);
      return;
    }
    size_t victim = static_cast<size_t>(f.target) % fleet_.size();
    std::string where = "between pages";
    std::unique_ptr<pg::Connection> blocker;
    std::vector<std::string> targets;
    for (int t : defined_)
      if (!paused_.count(t)) targets.push_back(transform(t).name);
    if (!targets.empty()) {
      std::string target = targets[static_cast<size_t>(f.target) % targets.size()];
      try {
        blocker = open_app();
        blocker->exec_script("BEGIN; SET LOCAL lock_timeout = '2s'; LOCK TABLE " + target +
                             " IN EXCLUSIVE MODE");
        auto deadline = Clock::now() + std::chrono::seconds(3);
        while (Clock::now() < deadline) {
          auto r =
              blocker->exec("SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = '" +
                            target + "'::regclass");
          if (r.get_int(0, 0) > 0) {
            where = "while a page waited on " + target;
            break;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
      } catch (const std::exception&) {
        blocker.reset();
      }
    }
    WorkerSpec killed = fleet_.kill(victim);
    if (blocker) {
      try {
        blocker->exec_script("ROLLBACK");
      } catch (const std::exception&) {
      }
    }
    WorkerSpec replacement = f.spec;
    if (killed.staging) replacement.staging = true;
    fleet_.spawn(replacement);
    log("killed -9 [" + killed.describe() + "] " + where + "; started [" + replacement.describe() +
        "]");
  }

  // Drops from waiting_ what no longer waits: its upstream is neither paused
  // nor waiting (it goes live, and then the reader builds on its own).
  void settle_waits() {
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = waiting_.begin(); it != waiting_.end();) {
        int up = transform(*it).upstream;
        if (!paused_.count(up) && !waiting_.count(up)) {
          it = waiting_.erase(it);
          changed = true;
        } else {
          ++it;
        }
      }
    }
  }

  // A transform resumed while its upstream is paused (or waits so itself)
  // waits at waiting_to_backfill and says for what.
  void expect_waiting(int t) {
    const std::string& name = transform(t).name;
    auto s = api_->status(name);
    std::string upstream = "public." + transform(transform(t).upstream).name;
    if (!s || s->status != "waiting_to_backfill" || s->upstream_waits.size() != 1 ||
        s->upstream_waits[0].transform != upstream)
      throw StepFailure{name + " should wait for its upstream " + upstream + " but is " +
                        (s ? describe_status(*s) : "(no status)")};
  }

  void check_the_judge() {
    for (int t : defined_) {
      if (paused_.count(t) || waiting_.count(t)) continue;
      const std::string& name = transform(t).name;
      if (app_->exec("SELECT count(*) FROM " + name).get_int(0, 0) == 0) continue;
      app_->exec("DELETE FROM " + name + " WHERE ctid = (SELECT min(ctid) FROM " + name + ")");
      if (hooks_.oracle_diff(name).empty())
        throw StepFailure{"the oracle did not notice a row deleted from " + name};
      log("oracle noticed a row deleted from " + name);
      return;
    }
  }

  // Where the ring and the sessions stand, for a report of a wait that
  // timed out: the newest segments, the buckets not done, the registered
  // workers, and what every other session of the database waits on.
  std::string stall_snapshot() {
    const char* queries[] = {
        "SELECT seg, state, fence, sealed_at, drained_at FROM trellis.segments ORDER BY seg DESC "
        "LIMIT 6",
        "SELECT seg, bucket, owner_pid, attempts, not_before FROM trellis.buckets WHERE NOT done "
        "ORDER BY seg, bucket LIMIT 12",
        "SELECT pid, kind, heartbeat FROM trellis.workers ORDER BY pid",
        "SELECT pid, application_name, state, wait_event_type, wait_event, now() - xact_start, "
        "left(regexp_replace(query, '\\s+', ' ', 'g'), 120) FROM pg_stat_activity WHERE datname "
        "= current_database() AND pid <> pg_backend_pid() ORDER BY pid"};
    std::string out = "--- stall ---\n";
    try {
      auto conn = open_app();
      for (const char* q : queries) {
        auto r = conn->exec(q);
        for (int i = 0; i < r.rows(); ++i) {
          std::string row;
          for (int c = 0; c < r.columns(); ++c) row += (c ? " | " : "  ") + r.get(i, c);
          out += row + "\n";
        }
        out += "  --\n";
      }
    } catch (const std::exception& e) {
      out += std::string("  (could not read: ") + e.what() + ")\n";
    }
    return out;
  }

  void quiesce() {
    std::string exited = fleet_.reap_exited();
    if (!exited.empty()) throw StepFailure{"a worker process died on its own:\n" + exited};
    for (int t : defined_)
      if (!paused_.count(t) && !waiting_.count(t)) await_live(t);
    for (int attempt = 0;; ++attempt) {
      try {
        Token token = api_->watermark_token();
        if (!api_->await_converged(token, kWait))
          throw StepFailure{fmt::format("not converged within {}s (token segment {})\n{}",
                                        kWait.count(), token.segment, stall_snapshot())};
        break;
      } catch (const Error& e) {
        if (attempt >= 20) throw StepFailure{std::string("token/await: ") + e.what()};
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    for (int t : waiting_) expect_waiting(t);
    std::string diffs;
    for (int t : defined_) {
      if (paused_.count(t) || waiting_.count(t)) continue;
      std::string d = hooks_.oracle_diff(transform(t).name);
      if (!d.empty()) diffs += transform(t).name + " differs from its definition:\n" + d;
    }
    if (!diffs.empty()) throw StepFailure{diffs};
    self_check_one();
    log(fmt::format("quiesce ok ({} transforms checked, {} waiting for a paused upstream)",
                    defined_.size() - paused_.size() - waiting_.size(), waiting_.size()));
  }

  // The oracle found every running target right: a self-check of one of
  // them (in turn) must say so too, or say that it holds keys.
  void self_check_one() {
    std::vector<int> running;
    for (int t : defined_)
      if (!paused_.count(t) && !waiting_.count(t)) running.push_back(t);
    if (running.empty()) return;
    const std::string& name = transform(running[audits_++ % running.size()]).name;
    SelfCheckOptions strict;
    strict.mode = "strict";
    SelfCheckJob job;
    try {
      job = api_->await_self_check(api_->self_check(name, strict).id, kWait);
    } catch (const Error& e) {
      throw StepFailure{"self-check of " + name + ": " + e.what()};
    }
    const auto& r = job.report;
    auto s = api_->status(name);
    bool holds = s && s->held_keys && s->held_keys->count > 0;
    if (r && (r->outcome == "converged" || (holds && r->outcome == "not_caught_up"))) {
      log(fmt::format("self-check of {}: {} ({} rows)", name, r->outcome, r->rows_compared));
      return;
    }
    std::string report = job.state + " " + job.error;
    if (r) {
      report = r->outcome + " " + r->detail;
      for (const auto& d : r->divergences)
        report += "\n  " + d.kind + " " + d.key + " " + d.column + " " +
                  d.persisted.value_or("NULL") + " / " + d.recomputed.value_or("NULL") + " " +
                  d.detail;
    }
    throw StepFailure{"the oracle found " + name + " right, its self-check: " + report};
  }

  const Generated& g_;
  const EpisodeHooks& hooks_;
  WorkerFleet fleet_;
  std::unique_ptr<pg::Connection> app_;
  std::unique_ptr<Trellis> api_;
  std::set<int> defined_, paused_;
  std::set<int> waiting_;  // resumed while the upstream was paused (or waited so)
  std::set<int> altered_;  // transforms carrying the field an ALTER added
  size_t audits_ = 0;      // self-checks run (which target is next)
  std::string log_;
  int failed_step_ = 0;
  std::string what_;
};

}  // namespace

std::string Generated::rows_sql() const {
  std::string out;
  for (size_t t = 0; t < schema.tables.size() && t < rows.size(); ++t)
    out += insert_rows(schema.tables[t], rows[t]);
  return out;
}

std::string Generated::describe() const {
  return fmt::format(
      "{}--- schema ---\n{}--- starting rows ---\n{}--- transforms (in program order) ---\n{}"
      "--- plan ---\n{}",
      shrink_path.empty()
          ? ""
          : "--- shrunk from seed " + std::to_string(seed) + " by ---\n" + shrink_path + "\n",
      schema.ddl(), rows_sql(), program.describe(), plan.describe(schema, program));
}

std::string Generated::replay_env() const {
  std::string out = "TRELLIS_GEN_SEED=" + std::to_string(seed);
  if (!shrink_path.empty()) out += " TRELLIS_GEN_SHRINK_PATH=" + shrink_path;
  if (!known_bugs_setting().empty()) out += " TRELLIS_GEN_KNOWN_BUGS=" + known_bugs_setting();
  return out;
}

namespace {

void add_partitions(Rng& rng, Generated& g) {
  std::vector<int> bursts;
  for (size_t i = 0; i < g.plan.steps.size(); ++i)
    if (g.plan.steps[i].kind == Step::Kind::burst) bursts.push_back(static_cast<int>(i));
  for (size_t i = 0; i < g.schema.tables.size(); ++i) {
    Table& t = g.schema.tables[i];
    if (!t.unique_column.empty()) continue;
    t.partitions = static_cast<int>(uniform(rng, 2, 4));
    if (bursts.empty()) continue;
    for (int n = static_cast<int>(uniform(rng, 1, 2)); n > 0; --n) {
      Fault f;
      f.kind = chance(rng, 0.7) ? Fault::Kind::reattach_partition : Fault::Kind::truncate_partition;
      f.at_percent = static_cast<int>(uniform(rng, 10, 90));
      f.target = static_cast<int>(i);
      f.partition = static_cast<int>(uniform(rng, 0, t.partitions - 1));
      f.concurrently = chance(rng, 0.4);
      auto& faults = g.plan.steps[static_cast<size_t>(pick(rng, bursts))].faults;
      faults.push_back(f);
      std::sort(faults.begin(), faults.end(),
                [](const Fault& a, const Fault& b) { return a.at_percent < b.at_percent; });
    }
  }
}

}  // namespace

Generated generate(uint64_t seed) {
  Generated g;
  g.seed = seed;
  Rng rng(seed);
  g.schema = random_schema(rng);
  // Drawn apart from `rng`, so an episode that is not hot is the same as
  // before hot programs existed (its seed replays as it did).
  // TRELLIS_GEN_HOT=0 or 1 forces it (=0 replays a seed recorded before hot
  // programs existed).
  bool hot = Rng(seed ^ 0x9e3779b97f4a7c15ULL)() % 10 < 3;
  if (const char* forced = std::getenv("TRELLIS_GEN_HOT"); forced && *forced)
    hot = std::string(forced) != "0";
  g.program = random_program(rng, g.schema, hot);
  for (const auto& t : g.schema.tables) g.rows.push_back(initial_rows(rng, t));
  g.plan = random_plan(rng, g.schema, g.program, static_cast<int>(uniform(rng, 2, 4)));
  // Partitioned tables, also drawn apart (TRELLIS_GEN_PARTITIONED=0 or 1
  // forces them off or on): some tables get hash partitions, and bursts get
  // partition events.
  Rng parts(seed ^ 0x5851f42d4c957f2dULL);
  bool partitioned = parts() % 10 < 3;
  if (const char* forced = std::getenv("TRELLIS_GEN_PARTITIONED"); forced && *forced)
    partitioned = std::string(forced) != "0";
  if (partitioned) add_partitions(parts, g);
  return g;
}

Outcome run_episode(const Generated& g, const EpisodeHooks& hooks) {
  Runner runner(g, hooks);
  Outcome out;
  out.failure = runner.run();
  out.log = runner.log();
  if (!out.failure.empty()) {
    out.failed_step = runner.failed_step();
    out.what = runner.what();
  }
  return out;
}

}  // namespace trellis::gen
