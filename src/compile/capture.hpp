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

// A column of the captured table as capture found it at install.
struct PlacedColumn {
  std::string name;
  int attnum = 0;
};

// The objects capture puts on a table and the probes that check them.
struct CaptureObjects {
  std::vector<std::string> drop;  // DROP TRIGGER / FUNCTION IF EXISTS
  std::string trigger_probe;      // counts this instance's enabled triggers calling its functions
  std::string trigger_like;       // a LIKE pattern matching this instance's trigger names
  // The names of the triggers on the table that call these functions (a
  // partition that moved to another captured table carries that one's).
  std::string own_triggers;
  std::string catalog_schema;  // the instance whose capture this is
  // One text digest of the installed trigger functions' bodies (NULL when
  // none is installed): stored at install, compared by the drift check to
  // notice a function replaced outside Trellis.
  std::string function_digest;
  // One row per capture event (event, trigger name, trigger present,
  // tgenabled, the trigger calls its event's function, the function exists,
  // it is SECURITY DEFINER, its owner, and the privileges that owner lacks
  // of those the functions need, as a JSON array): what a self-check audits.
  std::string trigger_audit;
};
CaptureObjects capture_objects(const catalog::CapturedTable& table, const RingShape& ring);

struct CaptureSql {
  std::vector<std::string> functions;        // CREATE OR REPLACE FUNCTION ... (4)
  std::vector<std::string> create_triggers;  // CREATE TRIGGER + ENABLE ALWAYS
  CaptureObjects objects;
};

// The leading columns of the table (`columns`: in attnum order, dropped ones
// left out) up to the last one capture reads: the triggers name these by
// their place, so a rename leaves them working, and check that each of them
// still exists, so a drop sends them to the path that cannot fail. Empty
// when capture reads a column `columns` does not hold.
std::vector<PlacedColumn> capture_layout(const catalog::CapturedTable& table,
                                         const std::vector<catalog::Column>& reads,
                                         const std::vector<PlacedColumn>& columns);

// `reads` are the columns any reader reads (the key included): an UPDATE that
// changes none of them stages nothing. `layout` is capture_layout(...).
CaptureSql compile_capture(const catalog::CapturedTable& table,
                           const std::vector<catalog::Column>& reads,
                           const std::vector<PlacedColumn>& layout, const RingShape& ring);

// The trigger name prefix this instance uses on user tables.
std::string trigger_name(const std::string& catalog_schema, const std::string& event);

}  // namespace trellis::compile
