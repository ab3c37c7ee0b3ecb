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

bool drained_through(pg::Connection& conn, const catalog::Store& store, int64_t seg) {
  return conn
      .exec(fmt::format("SELECT NOT EXISTS (SELECT 1 FROM {} s WHERE s.seg <= $1::bigint AND "
                        "s.state NOT IN ('drained', 'retired') AND NOT (s.state = 'active' AND "
                        "NOT {})) AND NOT {}",
                        store.table("segments"), slot_has_rows(store.schema(), "s.seg"),
                        store.holds_changes_through("$1::bigint")),
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

}  // namespace trellis::ring
