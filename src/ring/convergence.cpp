// Drain progress over the ring's segments; see convergence.hpp.
#include "ring/convergence.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "ring/ring.hpp"

namespace trellis::ring {

int64_t token_segment(pg::Connection& conn, const catalog::Store& store) {
  auto r = conn.exec(fmt::format(
      "WITH cur AS (SELECT pg_sequence_last_value({}::regclass) AS seg) SELECT seg, {} FROM cur",
      base::literal(store.table("active_segment")), slot_has_rows(store.schema(), "seg")));
  int64_t seg = r.get_int(0, 0);
  return r.get_bool(0, 1) ? seg : seg - 1;
}

// A ready segment whose buckets are all done counts as drained at once: the
// staging worker marks it drained (and copies its buckets' into_seg onto it)
// only on its next tick, which a wait need not sit out.
bool drained_through(pg::Connection& conn, const catalog::Store& store, int64_t seg) {
  return conn
      .exec(fmt::format("SELECT NOT EXISTS (SELECT 1 FROM {0} s WHERE s.seg <= $1::bigint AND "
                        "s.state NOT IN ('drained', 'retired') AND NOT (s.state = 'active' AND "
                        "NOT {1}) AND NOT (s.state = 'ready' AND NOT EXISTS (SELECT 1 FROM {2} b "
                        "WHERE b.seg = s.seg AND NOT b.done))) AND NOT {3}",
                        store.table("segments"), slot_has_rows(store.schema(), "s.seg"),
                        store.table("buckets"), store.holds_changes_through("$1::bigint")),
            {std::to_string(seg)})
      .get_bool(0, 0);
}

// Segments not marked drained yet still carry into_seg on their buckets.
int64_t downstream_reach(pg::Connection& conn, const catalog::Store& store, int64_t seg) {
  auto r =
      conn.exec(fmt::format("SELECT greatest(coalesce((SELECT max(into_seg) FROM {} WHERE seg <= "
                            "$1::bigint), 0), coalesce((SELECT max(into_seg) FROM {} WHERE seg <= "
                            "$1::bigint), 0))",
                            store.table("segments"), store.table("buckets")),
                {std::to_string(seg)});
  return r.get_int(0, 0);
}

}  // namespace trellis::ring
