// Statements of partition corrections; see partition_sql.hpp.
#include "compile/partition_sql.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "catalog/ring_geometry.hpp"
#include "compile/key_codec.hpp"

namespace trellis::compile {

namespace {

std::string insert_ring_rows(int table_id, const std::string& keys, const RingShape& ring,
                             int slot) {
  return fmt::format("INSERT INTO {} (tbl, key, bucket, op) SELECT {}, c.k, {}, 'u' FROM ({}) c",
                     base::qualified(ring.catalog_schema, catalog::ring_slot_table(slot)), table_id,
                     key_bucket("c.k", catalog::kRingBuckets), keys);
}

}  // namespace

std::string stage_partition_keys(const catalog::CapturedTable& root, const std::string& partition,
                                 const RingShape& ring, int slot) {
  return insert_ring_rows(
      root.id, fmt::format("SELECT {} AS k FROM {} r", encode_key(root.key, "r"), partition), ring,
      slot);
}

std::string stage_held_keys(int table_id, const std::vector<catalog::Column>& key,
                            const std::string& held_from, const std::string& constraint,
                            const RingShape& ring, int slot) {
  return insert_ring_rows(table_id,
                          fmt::format("SELECT DISTINCT {} AS k FROM {} r WHERE {}",
                                      encode_key(key, "r"), held_from, constraint),
                          ring, slot);
}

}  // namespace trellis::compile
