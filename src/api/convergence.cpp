// watermark_token / await_converged (SPEC §4). A token is the newest segment
// that can hold a change committed before it: the active segment if its slot
// already holds committed rows, else the one before. Converged means every
// segment up to the token is drained; a drained segment records the newest
// segment its target writes could have staged into (chained targets), and the
// wait follows those hops up to the depth of the transform graph.
#include <fmt/format.h>

#include <thread>

#include "api/instance.hpp"
#include "base/sql_text.hpp"
#include "ring/ring.hpp"

namespace trellis::api {

namespace {

// Every segment up to `seg` is drained (the active one counts as drained
// while it holds no committed row) and no change in them is held in
// quarantine for a transform that still runs (a key held by the build
// blocks every token).
bool drained_through(pg::Connection& conn, const catalog::Store& store, int64_t seg) {
  return conn
      .exec(fmt::format(
                "SELECT NOT EXISTS (SELECT 1 FROM {} s WHERE s.seg <= $1::bigint AND "
                "s.state NOT IN ('drained', 'retired') AND NOT (s.state = 'active' AND "
                "NOT {})) AND NOT EXISTS (SELECT 1 FROM {} h JOIN {} t ON t.id = "
                "h.transform_id WHERE h.held AND coalesce(h.seg, 0) <= $1::bigint AND t.status IN "
                "('backfilling', 'live'))",
                store.table("segments"), ring::slot_has_rows(store.schema(), "s.seg"),
                store.table("held_keys"), store.table("transforms")),
            {std::to_string(seg)})
      .get_bool(0, 0);
}

int64_t downstream_reach(pg::Connection& conn, const catalog::Store& store, int64_t seg) {
  auto r =
      conn.exec(fmt::format("SELECT coalesce(max(into_seg), 0) FROM {} WHERE seg <= $1::bigint",
                            store.table("segments")),
                {std::to_string(seg)});
  return r.get_int(0, 0);
}

}  // namespace

Token take_token(Trellis::Impl& impl) {
  auto conn = impl.pool.acquire();
  auto r = conn->exec(fmt::format(
      "WITH cur AS (SELECT pg_sequence_last_value({}::regclass) AS seg) SELECT seg, {} FROM cur",
      base::literal(impl.store.table("active_segment")),
      ring::slot_has_rows(impl.store.schema(), "seg")));
  int64_t seg = r.get_int(0, 0);
  return Token{r.get_bool(0, 1) ? seg : seg - 1};
}

bool wait_converged(Trellis::Impl& impl, const Token& token, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto conn = impl.pool.acquire();
  int hops = static_cast<int>(
      conn->exec(fmt::format("SELECT count(*) FROM {}", impl.store.table("transforms")))
          .get_int(0, 0));
  int64_t target = token.segment;
  for (int hop = 0; hop <= hops; ++hop) {
    while (!drained_through(*conn, impl.store, target)) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    int64_t next = downstream_reach(*conn, impl.store, target);
    if (next <= target) return true;
    target = next;
  }
  return true;
}

}  // namespace trellis::api
