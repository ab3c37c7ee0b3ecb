// SQL for capture on one table (docs/architecture.md, data path steps 2 and 3): statement-level
// AFTER triggers with transition tables that append (table id, key, bucket, op) to the ring slot of
// the active segment, in the writer's transaction (I2).
#pragma once

#include <string>
#include <vector>

#include "catalog/definition.hpp"

namespace trellis::compile {

// The slot tables and the bucket count are the catalog's
// (catalog/ring_geometry.hpp).
struct RingShape {
  std::string catalog_schema;
};

struct CaptureSql {
  std::vector<std::string> functions;        // CREATE OR REPLACE FUNCTION ... (4)
  std::vector<std::string> create_triggers;  // CREATE TRIGGER + ENABLE ALWAYS
  std::vector<std::string> drop;             // DROP TRIGGER / FUNCTION IF EXISTS
  std::string trigger_probe;                 // counts this instance's enabled triggers on the table
  // One text digest of the installed trigger functions' bodies (NULL when
  // none is installed): stored at install, compared by the drift check to
  // notice a function replaced outside Trellis.
  std::string function_digest;
};

// `reads` are the columns any reader reads (the key included): an UPDATE that
// changes none of them stages nothing.
CaptureSql compile_capture(const catalog::CapturedTable& table,
                           const std::vector<catalog::Column>& reads, const RingShape& ring);

// The trigger name prefix this instance uses on user tables.
std::string trigger_name(const std::string& catalog_schema, const std::string& event);

}  // namespace trellis::compile
