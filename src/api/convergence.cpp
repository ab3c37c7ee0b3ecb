// watermark_token / await_converged (README, "Running against your
// database"): a token is a ring segment (ring/convergence); the wait polls
// until every segment up to it is drained, then follows the segments the
// drains wrote into (chained targets), up to the depth of the transform graph.
// A partition event (ATTACH, DETACH, DROP) writes no ring row until the
// staging worker notices it, so the wait first lets every partition tree
// match its records and every correction close (capture/partitions); what
// those corrections staged is then covered by a fresh token.
#include "ring/convergence.hpp"

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

}  // namespace trellis::api
