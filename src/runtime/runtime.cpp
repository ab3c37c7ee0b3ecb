// Worker loops. The staging worker ticks (reconcile capture, seal, promote
// fenced segments, retire) and notifies drains when work appears; drain
// threads claim buckets first and build chunks second, and sleep on LISTEN
// with a polling floor when there is nothing to do. A drain page that feeds a
// chain's next hop wakes this process's staging worker early, so each hop
// does not wait out a whole tick.
#include "runtime/runtime.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "apply/drainer.hpp"
#include "audit/self_check_runner.hpp"
#include "base/sql_text.hpp"
#include "build/builder.hpp"
#include "capture/drift.hpp"
#include "capture/reconciler.hpp"
#include "catalog/store.hpp"
#include "compile/transform_sql.hpp"
#include "pg/sql_error.hpp"
#include "ring/ring.hpp"

namespace trellis {

namespace {

// An idle drain thread sleeps on LISTEN: the staging worker notifies when it
// promotes a segment and the API when a build starts. The floor bounds how
// late a bucket whose retry time came (quarantine retries are ~100 ms apart),
// or a claim left by a dead worker, is picked up; its polls are prepared
// statements, so an idle poll costs the server a few tens of microseconds.
constexpr std::chrono::milliseconds kPollFloor{250};
// A claim that found every ready bucket locked by another thread's claim
// (drain_one's "contended") is tried again this soon, up to this many times
// in a row, before the thread sleeps as above.
constexpr std::chrono::milliseconds kContendedRetryWait{2};
constexpr int kContendedRetries = 5;
// A drain thread takes ready claims one after another for up to this long
// before its next build step (a range runs ~0.2-0.3 s): a build's keys are
// parked soon after they are staged, while the ranges that will read them
// are still ahead of the frontier (docs/architecture.md, "Building by
// ranges", step 4), and other transforms' drains are not held to one claim
// per range.
constexpr std::chrono::milliseconds kDrainTurn{100};
// Schema drift is checked every this many staging ticks (about once a second
// at the default tick).
constexpr int kDriftEveryTicks = 10;
// After a seal, the fence is looked at again this many times, this far apart,
// before the tick ends (see staging_loop).
constexpr int kPromoteRetries = 5;
constexpr std::chrono::milliseconds kPromoteRetryWait{4};
// A drain page that wrote to a captured target (a chain's next hop) asks the
// staging worker of this process for an early tick, at most this often.
constexpr std::chrono::milliseconds kMinTickGap{20};

std::string hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::chrono::milliseconds backoff(int failures) {
  return std::chrono::milliseconds(std::min(2000, 50 << std::min(failures, 6)));
}

}  // namespace

void register_worker(pg::Connection& conn, const std::string& schema, const std::string& kind) {
  conn.exec(fmt::format("INSERT INTO {} (pid, backend_start, kind, host) SELECT pg_backend_pid(), "
                        "backend_start, $1, $2 FROM pg_stat_activity WHERE pid = pg_backend_pid() "
                        "ON CONFLICT DO NOTHING",
                        base::qualified(schema, "workers")),
            {kind, hostname()});
}

void forget_dead_workers(pg::Connection& conn, const std::string& schema) {
  conn.exec(
      fmt::format("DELETE FROM {} w WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a "
                  "WHERE a.pid = w.pid AND a.backend_start = w.backend_start)",
                  base::qualified(schema, "workers")));
}

bool has_live_worker(pg::Connection& conn, const std::string& schema, const std::string& kind) {
  auto res = conn.exec(fmt::format("SELECT EXISTS (SELECT 1 FROM {} w JOIN pg_stat_activity a ON "
                                   "a.pid = w.pid AND a.backend_start = w.backend_start WHERE "
                                   "w.kind = $1)",
                                   base::qualified(schema, "workers")),
                       {kind});
  return res.get_bool(0, 0);
}

std::map<std::string, int64_t> live_workers(pg::Connection& conn, const std::string& schema) {
  auto res =
      conn.exec(fmt::format("SELECT w.kind, count(*) FROM {} w JOIN pg_stat_activity a ON "
                            "a.pid = w.pid AND a.backend_start = w.backend_start GROUP BY "
                            "w.kind",
                            base::qualified(schema, "workers")));
  std::map<std::string, int64_t> out = {{"drain", 0}, {"staging", 0}};
  for (int i = 0; i < res.rows(); ++i) out[res.get(i, 0)] = res.get_int(i, 1);
  return out;
}

Runtime::Runtime(const Options& options) : options_(options) {}

Runtime::~Runtime() {
  stop();
}

bool Runtime::acquire_staging_lock() {
  staging_lock_ = pg::Connection::open(options_.url);
  auto got = staging_lock_->exec("SELECT pg_try_advisory_lock(hashtext('trellis.staging:' || $1))",
                                 {options_.schema});
  return got.get_bool(0, 0);
}

void Runtime::start() {
  if (options_.staging) {
    if (!acquire_staging_lock())
      throw Error(ErrorCode::conflict,
                  fmt::format("another process already runs the staging worker of instance "
                              "\"{}\"; run this one with staging off (--no-staging)",
                              options_.schema));
    threads_.emplace_back([this] { staging_loop(); });
  }
  for (int i = 0; i < options_.drain_threads; ++i)
    threads_.emplace_back([this, i] { drain_loop(i); });
}

void Runtime::stop() {
  stopping_ = true;
  wake_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
  staging_lock_.reset();
}

bool Runtime::sleep_for(std::chrono::milliseconds d) {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, d, [this] { return stopping_.load(); });
  return !stopping_;
}

bool Runtime::sleep_until_tick(std::chrono::milliseconds d) {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, d, [this] { return stopping_.load() || tick_requested_; });
  tick_requested_ = false;
  return !stopping_;
}

void Runtime::request_tick() {
  {
    std::lock_guard lock(mutex_);
    tick_requested_ = true;
  }
  wake_.notify_all();
}

void Runtime::staging_loop() {
  catalog::Store store(options_.schema);
  ring::Ring ring({options_.schema});
  capture::Reconciler reconciler(store, {options_.schema});
  capture::DriftWatch drift(store, {options_.schema});
  std::unique_ptr<pg::Connection> conn;
  int failures = 0;
  int64_t ticks = 0;
  std::string reconciled;  // the catalog fingerprint the last reconcile saw
  bool partition_work = false;
  while (!stopping_) {
    auto tick_start = std::chrono::steady_clock::now();
    try {
      if (!staging_lock_ || !staging_lock_->healthy()) {
        if (!acquire_staging_lock()) {  // another process took over meanwhile
          if (!sleep_for(std::chrono::seconds(1))) break;
          continue;
        }
      }
      if (!conn) {
        conn = pg::Connection::open(options_.url);
        ring.recover(*conn);
        forget_dead_workers(*conn, options_.schema);
        register_worker(*conn, options_.schema, "staging");
      }
      if (ticks % kDriftEveryTicks == 0) drift.check(*conn);
      // Partition trees are looked at with the drift check, and every tick
      // while corrections are under way (capture/partitions).
      if (ticks % kDriftEveryTicks == 0 || partition_work) {
        auto attention = reconciler.partitions().attention(*conn);
        partition_work = attention.tree_changed || attention.work;
        if (attention.tree_changed) reconciler.unsettle();
      }
      // An idle tick is two cheap reads: the catalog's fingerprint and the
      // ring probe. Each part runs only when they say it has work.
      bool started = false;
      std::string fingerprint = store.fingerprint(*conn);
      if (fingerprint != reconciled || !reconciler.settled()) {
        started = reconciler.reconcile(*conn);
        reconciled = fingerprint;
      }
      if (partition_work) reconciler.partitions().correct(*conn);
      auto state = ring.probe(*conn);
      bool promoted = false;
      if (state.segments_in_flight || state.active_has_rows) {
        ring.recover(*conn);  // a seal interrupted by an error is completed first
        bool sealed = state.active_has_rows && ring.seal(*conn);
        promoted = ring.promote_fenced(*conn) > 0;
        // A segment just sealed is fenced as soon as the writers that were
        // running at the seal end, usually within milliseconds: look again
        // shortly rather than a whole tick later.
        for (int i = 0; sealed && !promoted && i < kPromoteRetries; ++i) {
          if (!sleep_for(kPromoteRetryWait)) break;
          promoted = ring.promote_fenced(*conn) > 0;
        }
        ring.retire(*conn);
      }
      if (started || promoted) store.notify_work(*conn);
      if (++ticks % 500 == 0) forget_dead_workers(*conn, options_.schema);
      failures = 0;
    } catch (const std::exception& e) {
      spdlog::warn("staging worker: {}", e.what());
      if (conn && !conn->healthy()) conn.reset();
      if (!sleep_for(backoff(failures++))) break;
      continue;
    }
    // A requested tick still waits out kMinTickGap from the last one, so
    // drains committing pages back to back cannot make it seal continuously.
    auto since = std::chrono::steady_clock::now() - tick_start;
    if (since < kMinTickGap &&
        !sleep_for(std::chrono::duration_cast<std::chrono::milliseconds>(kMinTickGap - since)))
      break;
    if (!sleep_until_tick(options_.tick)) break;
  }
}

void Runtime::drain_loop(int index) {
  catalog::Store store(options_.schema);
  apply::DrainConfig drain_config;
  drain_config.threads = std::max(1, options_.drain_threads);
  apply::Drainer drainer(store, drain_config);
  build::BuildConfig build_config;
  build_config.range_rows = std::max(1, options_.build_range_rows);
  build_config.threads = drain_config.threads;
  build::Builder builder(store, build_config);
  audit::SelfCheckRunner audits(store, options_.self_check_page_rows);
  std::unique_ptr<pg::Connection> conn;
  int failures = 0;
  int contended_retries = 0;
  while (!stopping_) {
    try {
      if (!conn) {
        conn = pg::Connection::open(options_.url);
        for (const auto& ddl : compile::create_temp_tables_sql()) conn->exec(ddl);
        conn->exec("LISTEN " + base::ident(store.work_channel()));
        register_worker(*conn, options_.schema, "drain");
      }
      bool worked = false;
      auto turn_end = std::chrono::steady_clock::now() + kDrainTurn;
      for (;;) {
        bool drained = drainer.drain_one(*conn);
        if (drainer.take_fed_downstream() && options_.staging) request_tick();
        if (!drained) break;
        worked = true;
        if (stopping_ || std::chrono::steady_clock::now() >= turn_end) break;
      }
      bool contended = drainer.take_contended();
      worked = builder.build_one_chunk(*conn) || worked;
      worked = audits.step_one(*conn) || worked;
      failures = 0;
      contended_retries = worked || !contended ? 0 : contended_retries + 1;
      if (!worked)
        conn->wait_notifications(contended_retries > 0 && contended_retries <= kContendedRetries
                                     ? kContendedRetryWait
                                     : kPollFloor);
    } catch (const std::exception& e) {
      spdlog::warn("drain thread {}: {}", index, e.what());
      if (conn && !conn->healthy()) conn.reset();
      if (!sleep_for(backoff(failures++))) break;
    }
  }
}

}  // namespace trellis
