// Schema drift and disruption (docs/architecture.md, Lifecycle: pause on drift), checked by the
// staging worker: for every table whose capture is installed and read by a
// running transform, the live catalog is compared with what the readers were
// defined against. A read column renamed, dropped or retyped, the key no
// longer unique, the table joining an inheritance hierarchy, row-level
// security applying to this role or a subscription writing into it pause the
// readers with capture_failure kind `capture` (RESUME re-validates and
// refuses until the schema fits again). Capture triggers disabled or
// dropped, or the table dropped or replaced by another of the same name,
// pause them with kind `disruption` (changes may be missing; RESUME
// reinstalls capture and rebuilds). A read column widened in a way
// PostgreSQL applies without a rewrite is followed in place instead
// (capture/widen). Everything else keeps running.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bind/table_description.hpp"
#include "catalog/store.hpp"
#include "compile/capture.hpp"
#include "pg/connection.hpp"

namespace trellis::capture {

// What the check found wrong with a captured table, in a sentence that
// names the table and the fix.
struct DriftFinding {
  catalog::FailureKind kind;
  std::vector<std::string> columns;
  std::string error;
  bool widening = false;  // only catalog-only widenings: applied in place, no pause
};

// A fault of captured table `t` itself, the same for every reader: dropped
// or replaced (`info` is its description now, none when it is gone),
// capture triggers not all enabled ALWAYS, a trigger function replaced, a
// hierarchy, row-level security, a subscription, its key no longer unique.
std::optional<DriftFinding> table_drift(pg::Connection& conn, const catalog::CapturedTable& t,
                                        const std::optional<bind::TableDescription>& info,
                                        const compile::CaptureObjects& capture);

class DriftWatch {
 public:
  DriftWatch(catalog::Store& store, compile::RingShape ring);
  // Checks every captured table once; returns how many transforms it paused.
  int check(pg::Connection& conn);

 private:
  catalog::Store& store_;
  compile::RingShape ring_;
};

}  // namespace trellis::capture
