// The words of a transform's lifecycle as types: its shape, its status, the
// phase its build is in and the kind of a capture failure. The catalog keeps
// each as the text name() gives (transforms.shape, .status, .build_phase,
// capture_failure->>'kind'); everything above the catalog compares the enums,
// never the text. The allowed changes between statuses are in transitions.hpp.
#pragma once

#include <string>
#include <string_view>

namespace trellis::catalog {

// one_to_one: a target row per source row; aggregate: a row per group.
enum class Shape { one_to_one, aggregate };

// Where a transform is in its life (docs/architecture.md, "Lifecycle").
enum class Status { waiting_to_backfill, backfilling, live, paused, quarantined };

// What a backfilling transform's build is doing: waiting for capture to
// cover it (and for drains on the old definition to end), writing the target
// (an aggregate's ledger) by source-key ranges while drains park its changed
// keys (ranges), for aggregates then writing the groups by group-key ranges
// of the ledger, drains still parking (group_ranges), then re-deriving the
// parked keys (parked); builds begun by an earlier version re-derive the
// source's keys, sweep the keys only the target holds (after RESUME) and
// recompute each group once (source, target, groups); or building named
// fields (ALTER).
enum class BuildPhase {
  awaiting_capture,
  ranges,
  group_ranges,
  parked,
  source,
  target,
  groups,
  fields
};

// Why capture or the data path stopped a transform: capture could not be
// installed, a privilege error halted it, or the source changed under it.
enum class FailureKind { capture, halt, disruption };

std::string_view name(Shape shape);
std::string_view name(Status status);
std::string_view name(BuildPhase phase);
std::string_view name(FailureKind kind);

// The enum a catalog word names; throws trellis::Error (internal) for a
// word no version of the catalog writes.
Shape shape_named(std::string_view word);
Status status_named(std::string_view word);
BuildPhase phase_named(std::string_view word);

// The word as an SQL string literal ('live'), for fixed statements.
std::string literal(Status status);
std::string literal(Shape shape);
std::string literal(BuildPhase phase);
std::string literal(FailureKind kind);

}  // namespace trellis::catalog
