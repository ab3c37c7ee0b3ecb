// watermark_token / await_converged (README, "Running against your
// database"): a token is a ring segment (ring/convergence); the wait polls
// until every segment up to it is drained, then follows the segments the
// drains wrote into (chained targets), up to the depth of the transform graph.
// A partition event (ATTACH, DETACH, DROP) writes no ring row until the
// staging worker notices it, so the wait first lets every partition tree
// match its records and every correction close (capture/partitions); what
// those corrections staged is then covered by a fresh token.
//
// await_live covers what a token does not: a transform's build. It polls the
// transform's status until it reads `live` (refusing at once a state that
// will not get there without an operator: paused, quarantined, dropped),
// then awaits a token taken at that moment, so the target also holds every
// change committed while it was being built.
#include "ring/convergence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "api/instance.hpp"
#include "catalog/partitions.hpp"

namespace trellis::api {

Token take_token(Trellis::Impl& impl) {
  auto conn = impl.pool.acquire();
  return Token{ring::token_segment(*conn, impl.store)};
}

bool wait_converged(Trellis::Impl& impl, const Token& token, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto conn = impl.pool.acquire();
  int hops = impl.store.transform_count(*conn);
  int64_t target = token.segment;
  catalog::Partitions partitions(impl.store.schema());
  for (bool waited = false;;) {
    auto attention = partitions.attention(*conn);
    if (!attention.tree_changed && !attention.corrections) {
      if (waited) target = std::max(target, ring::token_segment(*conn, impl.store));
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    waited = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (int hop = 0; hop <= hops; ++hop) {
    while (!ring::drained_through(*conn, impl.store, target)) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    int64_t next = ring::downstream_reach(*conn, impl.store, target);
    if (next <= target) return true;
    target = next;
  }
  return true;
}

namespace {

// One line on why `s` is not live yet, for a timeout's message.
std::string not_live_because(const Status& s) {
  std::string why = fmt::format("it is {}", s.status);
  if (!s.paused_upstream_columns.empty()) {
    std::string columns;
    for (const auto& c : s.paused_upstream_columns) columns += (columns.empty() ? "" : ", ") + c;
    why += fmt::format(" (upstream columns paused: {}; RESUME them)", columns);
  }
  if (s.capture_wait)
    why += fmt::format("; installing capture on {} waits for a lock", s.capture_wait->table);
  if (s.backfill_failure)
    why += fmt::format("; the build keeps failing: {}", s.backfill_failure->error);
  if (s.drain_failure)
    why += fmt::format("; the drain keeps failing on {}: {}", s.drain_failure->table,
                       s.drain_failure->error);
  return why;
}

Status status_of(Trellis::Impl& impl, const std::string& target) {
  auto all = read_status(impl, target);
  if (all.empty())
    throw Error(ErrorCode::not_found,
                fmt::format("no transform has target {}; `trellis status` lists them", target));
  return all.front();
}

}  // namespace

Status wait_live(Trellis::Impl& impl, const std::string& target,
                 std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::milliseconds(10);
  for (;;) {
    Status s = status_of(impl, target);
    if (s.is(Lifecycle::live)) break;
    if (s.is(Lifecycle::paused) || s.is(Lifecycle::quarantined))
      throw Error(ErrorCode::conflict,
                  fmt::format("transform {} is {} and will not become live by waiting; RESUME "
                              "TRANSFORM {} first (`trellis status {}` says why)",
                              s.target, s.status, s.target, s.target));
    auto now = Clock::now();
    if (now >= deadline)
      throw Error(ErrorCode::timeout,
                  fmt::format("transform {} is not live after {:g} s: {}", s.target,
                              timeout.count() / 1000.0, not_live_because(s)));
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
  }
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (!wait_converged(impl, take_token(impl), std::max(left, std::chrono::milliseconds(0)))) {
    Status s = status_of(impl, target);
    std::string held = s.held_keys ? fmt::format("; {} keys are held (`trellis status {}`)",
                                                 s.held_keys->count, s.target)
                                   : "";
    throw Error(ErrorCode::timeout,
                fmt::format("transform {} is live but the changes committed meanwhile had not "
                            "reached every target after {:g} s{}",
                            s.target, timeout.count() / 1000.0, held));
  }
  return status_of(impl, target);
}

}  // namespace trellis::api
