// The capture audit of a self-check (README, "Auditing a target"): is every
// table a transform is computed from still captured as it was installed?
// Each table must have all four capture triggers, each enabled ALWAYS and
// calling its event's function; the functions must exist, run as SECURITY
// DEFINER, and their owner must hold what they use (the catalog schema,
// every ring slot, the segment sequence); and nothing the drift check
// pauses for may hold (capture/drift: dropped or replaced table, replaced
// function, hierarchy, row-level security, subscription, key). Read only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "catalog/definition.hpp"
#include "catalog/store.hpp"
#include "compile/capture.hpp"
#include "pg/connection.hpp"

namespace trellis::capture {

struct CaptureFault {
  std::string table;   // schema.table
  std::string detail;  // a sentence naming the object and the fix
};

// The faults of capture on the tables `def` reads; empty when sound. Read
// in one REPEATABLE READ snapshot of its own (so `conn` must not be in a
// transaction). `after_tables_read` is a test seam: it runs once the
// captured tables are read, before anything else is.
std::vector<CaptureFault> audit_capture(pg::Connection& conn, catalog::Store& store,
                                        const compile::RingShape& ring,
                                        const catalog::TransformDef& def,
                                        const std::function<void()>& after_tables_read = {});

}  // namespace trellis::capture
