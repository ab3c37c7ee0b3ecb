// Statements of partition corrections; see partition_sql.hpp.
#include "compile/partition_sql.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "catalog/ring_geometry.hpp"
#include "compile/key_codec.hpp"

namespace trellis::compile {

std::string stage_partition_keys(const catalog::CapturedTable& root, const std::string& partition,
                                 const std::vector<HeldKeys>& held, const std::string& constraint,
                                 const RingShape& ring, int slot) {
  std::vector<std::string> parts;
  if (!partition.empty())
    parts.push_back(fmt::format("SELECT {} AS k FROM {} r", encode_key(root.key, "r"), partition));
  for (const auto& h : held)
    parts.push_back(fmt::format("SELECT {} AS k FROM {} r WHERE {}", encode_key(h.key, "r"), h.from,
                                constraint));
  return fmt::format("INSERT INTO {} (tbl, key, bucket, op) SELECT {}, c.k, {}, 'u' FROM ({}) c",
                     base::qualified(ring.catalog_schema, catalog::ring_slot_table(slot)), root.id,
                     key_bucket("c.k", catalog::kRingBuckets),
                     parts.empty() ? "SELECT NULL::text[] AS k WHERE false"
                                   : base::join<std::string>(
                                         parts, " UNION ", [](const std::string& p) { return p; }));
}

}  // namespace trellis::compile
