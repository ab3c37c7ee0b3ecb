// The allowed changes of a transform's status, written down once. Each
// operation names the statuses it may start from, the status it leaves the
// transform in and the SET list that makes the change (with whatever build
// state it resets). Every statement that changes a transform's status is
// rendered from this table: the catalog's own operations (lifecycle.hpp)
// and the few statements that combine a change with other bookkeeping in
// one statement (the quarantine fuses and the halt, compile/quarantine_sql).
// docs/architecture.md ("Lifecycle") shows the same table; a unit test
// checks that the two agree and walks every operation from every status.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/states.hpp"

namespace trellis::catalog {

enum class Operation {
  define,             // TRANSFORM: a new catalog row
  start_build,        // capture covers its reads (and every upstream is live)
  start_field_build,  // ALTER TRANSFORM, RESUME TRANSFORM t.col
  rebuild_in_place,   // request_backfill, a column fuse, held keys a widening lets go
  go_live,            // the build's last chunk
  pause,              // PAUSE TRANSFORM
  pause_on_drift,     // the source changed under a running transform
  halt,               // a privilege error (and, transitively, the readers of its target)
  quarantine,         // the fuse: too many held keys
  resume,             // RESUME TRANSFORM
  drop,               // DROP TRANSFORM: the row goes
};

struct Transition {
  Operation op;
  std::string_view name;
  std::vector<Status> from;  // empty: the operation creates the transform
  std::optional<Status> to;  // none: the operation removes it
  // The SET list of the UPDATE making the change (empty for define and drop).
  std::string set;
};

// Every operation, in the order of the enum.
const std::vector<Transition>& transitions();
const Transition& transition(Operation op);
bool allowed(Operation op, Status from);

// `<alias.>status IN (...)`: the statuses `op` may start from.
std::string from_condition(Operation op, std::string_view alias = "");

// `<alias.>status IN ('backfilling', 'live')`: the transforms drains
// re-derive for (built, or being built).
std::string running(std::string_view alias = "");
bool running(Status status);

// The captured tables a transform row reads, as an int[]: its source's and
// each joined table's (definition -> 'joins').
std::string read_table_ids(std::string_view alias = "");

// The condition that no registered worker transaction (`workers`: the
// workers table) other than this one began before `fence` (an SQL
// timestamptz expression) and is still open.
std::string no_worker_transaction_before(const std::string& fence, const std::string& workers);

// The SET item that bumps a transform's version: drains and builds holding
// the older version recompile its statements before their next page.
std::string_view bump_version();

// The phase a build goes to after `phase`, or none when the build is done:
// ranges -> (aggregates: group_ranges) -> parked -> live. A field build is the
// single phase `fields`. Builds begun by an earlier version go on by keyset
// chunks: source -> target (only with `sweep`, after RESUME) -> groups
// (aggregates) -> live.
std::optional<BuildPhase> next_phase(BuildPhase phase, bool sweep, Shape shape);
// The phase a full build starts in.
BuildPhase first_phase();

}  // namespace trellis::catalog
