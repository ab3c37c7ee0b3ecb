// test_reset (README, "Application test suites"): the reset an application's
// test suite runs in its setup hook, after fixtures were loaded with
// triggers disabled, tables swapped or truncated. Capture cannot see a write
// made while its triggers were disabled, even when they are enabled again
// before the drift check looks, so the reset does not trust capture:
//
// 1. the drift check runs now, so a table whose capture is disabled, dropped
//    or replaced pauses its readers (kind `disruption`) instead of waiting
//    for the staging worker's next check;
// 2. every transform paused by a failure (capture_failure) or quarantined is
//    resumed: capture is reinstalled and the target rebuilt. One paused by
//    PAUSE TRANSFORM is left paused, and listed, and so is a column paused
//    by PAUSE TRANSFORM t.col or its fuse (the column keeps its values);
// 3. every other running transform is rebuilt in place (request_backfill of
//    each table it reads), which repairs any write capture missed;
// 4. it waits, within the timeout, until every transform it touched is live,
//    then until every change committed before that has reached every target.
// It needs running workers (this process's or another's).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "api/instance.hpp"
#include "base/event_log.hpp"
#include "capture/drift.hpp"

namespace trellis::api {

namespace {

using Clock = std::chrono::steady_clock;

bool operator_paused(const Status& s) {
  return s.is(Lifecycle::paused) && !s.capture_failure;
}

// Waits until every transform of `targets` is live; throws timeout naming
// the ones that are not.
void wait_live(Trellis::Impl& impl, const std::set<std::string>& targets, Clock::time_point until) {
  for (;;) {
    std::vector<std::string> pending;
    for (const auto& s : read_status(impl, std::nullopt))
      if (targets.count(s.target) && s.status != word(Lifecycle::live))
        pending.push_back(s.target + " (" + s.status + ")");
    if (pending.empty()) return;
    if (Clock::now() >= until) {
      std::string list;
      for (const auto& p : pending) list += (list.empty() ? "" : ", ") + p;
      throw Error(ErrorCode::timeout,
                  fmt::format("test_reset: not live within the timeout: {}; `trellis status` "
                              "says why",
                              list));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

TestResetReport test_reset(Trellis::Impl& impl, std::chrono::milliseconds timeout) {
  auto started = Clock::now();
  auto until = started + timeout;
  TestResetReport report;
  {
    auto conn = impl.pool.acquire();
    if (!has_live_worker(*conn, impl.options.schema, "staging") ||
        !has_live_worker(*conn, impl.options.schema, "drain"))
      throw Error(ErrorCode::validation,
                  "test_reset needs a running staging worker and drain workers (this process's "
                  "or another's): start `trellis run`, or connect with staging and drain threads");
    capture::DriftWatch drift(impl.store, {impl.store.schema()});
    drift.check(*conn);
  }
  std::set<std::string> touched;
  std::set<int> tables;
  auto defs = [&] {
    auto conn = impl.pool.acquire();
    return impl.store.transforms(*conn);
  }();
  std::map<std::string, Status> statuses;
  for (auto& s : read_status(impl, std::nullopt)) statuses[s.target] = s;
  for (const auto& d : defs) {
    auto found = statuses.find(d.target_name());
    if (found == statuses.end()) continue;  // dropped meanwhile
    const Status& s = found->second;
    if (operator_paused(s)) {
      report.left_paused.push_back(d.target_name());
    } else if (s.is(Lifecycle::paused) || s.is(Lifecycle::quarantined)) {
      if (s.capture_failure && s.capture_failure->kind == "disruption")
        report.disrupted.push_back(d.target_name());
      try {
        resume_transform(impl, {{d.target_schema, d.target_table}, std::nullopt});
      } catch (const Error& e) {
        throw Error(e.code(),
                    fmt::format("test_reset could not resume {}: {}", d.target_name(), e.what()));
      }
      report.resumed.push_back(d.target_name());
      touched.insert(d.target_name());
    } else if (s.is(Lifecycle::waiting_to_backfill)) {
      touched.insert(d.target_name());  // builds once capture (or its upstream) is there
    } else {
      for (int id : d.table_ids()) tables.insert(id);
      report.rebuilt.push_back(d.target_name());
      touched.insert(d.target_name());
    }
  }
  {
    auto conn = impl.pool.acquire();
    for (int id : tables)
      for (const auto& target : impl.lifecycle.rebuild_readers_of(*conn, id))
        base::log_event(spdlog::level::info, "rebuilding", target, {{"cause", "test_reset"}},
                        fmt::format("transform {} rebuilds in place: test_reset", target));
    impl.store.notify_work(*conn);
  }
  wait_live(impl, touched, until);
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
  if (!wait_converged(impl, take_token(impl), std::max(left, std::chrono::milliseconds(0))))
    throw Error(ErrorCode::timeout,
                "test_reset: every transform is live, but the changes committed meanwhile did "
                "not reach every target within the timeout");
  report.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return report;
}

}  // namespace trellis::api
