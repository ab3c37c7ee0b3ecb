// Ring backlog; see backlog.hpp.
#include "ring/backlog.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "catalog/ring_geometry.hpp"

namespace trellis::ring {

Backlog read_backlog(pg::Connection& conn, const std::string& catalog_schema) {
  std::string sizes;
  for (int slot = 0; slot < catalog::kRingSlots; ++slot)
    sizes +=
        fmt::format(" + pg_total_relation_size({})",
                    base::literal(base::qualified(catalog_schema, catalog::ring_slot_table(slot))));
  std::string schema = base::ident(catalog_schema);
  auto r = conn.exec(fmt::format(
      "SELECT s.state, count(*), NULL::bigint FROM {0}.segments s GROUP BY s.state UNION ALL "
      "SELECT NULL, coalesce(sum(b.ring_rows), 0), 0{1} FROM {0}.buckets b WHERE NOT b.done",
      schema, sizes));
  Backlog out;
  for (int i = 0; i < r.rows(); ++i) {
    if (auto state = r.get_opt(i, 0)) {
      out.segments[*state] = r.get_int(i, 1);
      continue;
    }
    out.rows = r.get_int(i, 1);
    out.bytes = r.get_int(i, 2);
  }
  return out;
}

}  // namespace trellis::ring
