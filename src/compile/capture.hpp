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

// The move guard of a partitioned table (docs/architecture.md, "Partitioned
// sources"). PostgreSQL 15 hands the rows a MERGE's UPDATE moves into another
// partition to no statement trigger (their transition tables come out
// empty), so on a server that does so the root also carries a row-level
// BEFORE UPDATE trigger, which PostgreSQL clones onto every partition, that
// fires only when a column a partition key reads changes and stages the
// row's old and new key. `columns` are partition_key_columns_sql()'s.
struct WatchedColumn {
  std::string name;
  // Its type (a domain's base type) is built in, so the guard compares it by
  // IS DISTINCT FROM, resolved to pg_catalog's `=`; any other by its stored
  // image, which costs more (two one-column rows built and compared).
  bool builtin_type = false;
};
struct MoveGuardSql {
  std::string function;  // CREATE OR REPLACE FUNCTION
  // DROP TRIGGER IF EXISTS, CREATE TRIGGER, ENABLE ALWAYS: one script.
  std::string create_trigger;
};
MoveGuardSql compile_move_guard(const catalog::CapturedTable& root,
                                const std::vector<WatchedColumn>& columns, const RingShape& ring);
std::string move_guard_trigger(const catalog::CapturedTable& root, const RingShape& ring);
// One boolean: every node of the root's partition tree (the root included)
// carries the guard, enabled ALWAYS and calling its function.
std::string move_guard_probe(const catalog::CapturedTable& root, const RingShape& ring);
// The columns (name, builtin_type; $1: the root's oid) that the partition keys of
// the root and of every partitioned partition under it read, in the root's
// attnum order: a key column by name, and for an expression key every column
// whose name its text contains (a superset, which only fires the guard more
// often). A partition's columns are named as its root's.
std::string partition_key_columns_sql();
// Whether the server hands a MERGE's moved rows to statement triggers: `run`
// (a DO block, which rolls back what it did itself) tries a MERGE moving a
// row between two partitions of a temporary table, and `read` then returns
// what an AFTER UPDATE statement trigger saw in its new transition table:
// "1" on a server that hands it such rows, "0" on one that does not
// (PostgreSQL 15 before the fix), "error" when the probe could not run.
struct MergeMoveProbe {
  std::string run;
  std::string read;
};
MergeMoveProbe merge_move_probe();

// The trigger name prefix this instance uses on user tables.
std::string trigger_name(const std::string& catalog_schema, const std::string& event);

}  // namespace trellis::compile
