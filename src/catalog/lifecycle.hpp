// Every change of a transform's catalog row, as a named operation with its
// SQL in one place: define, start a build (or a field build), move a build
// through its phases and live, pause, resume, rebuild in place, bump the
// version with a new definition, and record what holds a transform up.
// Status changes are rendered from the lifecycle table (transitions.hpp),
// each guarded by the statuses its operation may start from. Readers of the
// catalog are in store.hpp; this file is its writers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/definition.hpp"
#include "catalog/store.hpp"
#include "pg/connection.hpp"

namespace trellis::catalog {

// Definitions as (id, version) pairs: the ones a capture pass read, whose
// reads the capture it installs covers. Only these may start a build.
struct Versions {
  std::vector<int> ids;
  std::vector<int> versions;
  void add(const TransformDef& def);
};

// A transform's row locked against concurrent edits (ALTER, RESUME t.col).
struct EditRow {
  Status status = Status::waiting_to_backfill;
  int version = 0;
  // The fields of an unfinished field build, if one is under way.
  std::optional<std::vector<std::string>> pending_fields;
};

// The build loop's statements, pipelined by the builder with its chunk.
struct BuildStatements {
  // -> id, build_phase, build_cursor, build_sweep_target of the build
  // claimed for keyset chunks (NULLs: none), then the ids of the transforms
  // in a phase by ranges or in its parked phase (int[] text).
  std::string claim;
  // $1 id, $2 version -> phase, cursor, sweep, fields, fence set, fence
  // passed (the row locked)
  std::string check;
  std::string advance;     // $1 id, $2 cursor: the page's keys are done
  std::string next_phase;  // $1 id, $2 the next phase (cursor and fence cleared)
  std::string go_live;     // $1 id
  std::string fail;        // $1 id, $2 error json: release with a doubling backoff
  std::string retry;       // $1 id, $2 error json, $3 ms: release, retry after $3 ms
  // The fence of a phase that must not start while a worker transaction
  // that read the phase before it may still write: set it (a time after the
  // phase change was seen), then it has passed once no worker transaction
  // older than it is open.
  std::string set_fence;     // $1 id
  std::string fence_passed;  // $1 id -> fence set, fence passed
  // Holds the transform ($1 id) with at least one held key ($1 -> bool).
  std::string holds_keys;
  // Moves up to $2 parked keys of transform $1 into the page (phase parked).
  std::string discharge;
  // Any drain thread's discharge of parked keys by key slots (beside the
  // claimant's chunks, which take whatever no thread has): $1 id, $2
  // version -> no row unless the transform is in its parked phase; else
  // whether the phase's fence has passed (the row FOR SHARE: the claimant
  // ends the phase only after every such discharge has committed).
  std::string discharge_check;
  // $1 id -> slot, parked keys, of each slot holding parked keys, in slot
  // order.
  std::string parked_slots;
  // $1 the claim lock of a slot (its transform's base plus the slot) ->
  // taken: an advisory try-lock no thread waits on.
  std::string claim_parked_slot;
  // $1 id, $2 keys, $3 the slots claimed (int2[]): moves up to $2 of their
  // parked keys into the page.
  std::string discharge_slots;
};

// The drain's record of a page failing for the transforms reading a table.
struct DrainFailureStatements {
  // $1 int[] tables, $2 error, $3 sqlstate -> (target, attempts) per reader
  std::string record;
  std::string clear;  // $1 int[] tables -> the targets whose failure it cleared
};

class Lifecycle {
 public:
  explicit Lifecycle(const Store& store);

  // define: the catalog row of a validated definition (waiting_to_backfill).
  void define(pg::Connection& conn, const TransformDef& def);
  // pause (PAUSE TRANSFORM): from any status.
  void pause(pg::Connection& conn, int id);
  // pause_on_drift: a running transform stops with `failure` (capture_failure
  // json, detected now); false when it was not running.
  bool pause_on_drift(pg::Connection& conn, int id, const std::string& failure);
  // resume: a paused or quarantined transform goes back to waiting_to_backfill
  // with its revalidated definition; false when it was neither.
  bool resume(pg::Connection& conn, int id, const TransformDef& fresh);
  // drop: the row of a paused transform goes; false when it was not paused.
  bool drop(pg::Connection& conn, int id);
  // rebuild_in_place of every running transform reading captured table
  // `table_id`; returns their targets (schema.table).
  std::vector<std::string> rebuild_readers_of(pg::Connection& conn, int table_id);
  // rebuild_in_place of the running transforms among `ids`; their targets.
  std::vector<std::string> rebuild(pg::Connection& conn, const std::vector<int>& ids);

  // Version bumps that keep the status (drains and builds recompile).
  void pause_column(pg::Connection& conn, int id, const std::string& column);
  void resume_column(pg::Connection& conn, int id, const std::string& column);
  // ALTER TRANSFORM: a new definition and statement; `dropped` fields are no
  // longer paused.
  void redefine(pg::Connection& conn, int id, const TransformDef& fresh,
                const std::vector<std::string>& dropped);
  // A widening followed in place: the definition with the wider types, if
  // the row is still at `def`'s version. Keys held because a value did not
  // fit the narrower copy fit now: they are let go and, if there were any,
  // the transform is rebuilt in place, which re-derives them.
  void widen(pg::Connection& conn, const TransformDef& def, const TransformDef& fresh);

  // Locks the row for an edit; none when it is gone or no longer at `version`.
  std::optional<EditRow> lock_for_edit(pg::Connection& conn, int id, int version);
  // start_field_build: back to backfilling, awaiting capture, building
  // `fields` (none: a full build).
  void start_field_build(pg::Connection& conn, int id,
                         const std::optional<std::vector<std::string>>& fields);

  // start_build of the waiting readers of captured table `table_id` (named
  // `qualified`, for the row estimate) among `covered`, with no upstream
  // that is not live; returns the targets of those started.
  std::vector<std::string> start_builds(pg::Connection& conn, int table_id,
                                        const std::string& qualified, const Versions& covered);
  // Field builds awaiting capture: record the fence (a time after their
  // ALTER was seen), then start those among `covered` once no worker
  // transaction older than their fence is open; returns the targets of
  // those started.
  void fence_field_builds(pg::Connection& conn);
  std::vector<std::string> start_fenced_field_builds(pg::Connection& conn, const Versions& covered);
  bool any_awaiting_capture(pg::Connection& conn);
  // What holds up the transforms waiting for capture of a table: a lock
  // capture could not take (who holds it; returns the targets that start
  // waiting now), or an error installing it.
  std::vector<std::string> record_capture_wait(pg::Connection& conn, int table_id,
                                               const std::string& table,
                                               const std::string& qualified);
  void record_capture_failure(pg::Connection& conn, int table_id, const std::string& table,
                              const std::string& error);

  // The build loop's statements; `page_table` is the drain's page.
  BuildStatements build_statements(const std::string& page_table) const;
  // The statement by which a drain page parks, for transform $1 (phase
  // ranges or group_ranges), its keys of its source table $2 and, when the
  // transform's joins fan out (their tables in $3, int[]; NULL when none
  // does), its keys of those tables: the discharge maps them again, so that
  // they re-derive the pairs they reach; of the source keys, only those the
  // transform re-derives whole. `page_table` is the drain's page;
  // `whole_roots_table`: the page's keys each transform re-derives whole
  // (tid, root), besides the page keys put there directly; `page_key_slot`:
  // the key slot of a page row `p` (its key's ring bucket). With
  // `beyond_frontier` (a predicate over page row `p` and
  // the frontier cursor `__f.cursor`, TransformSql::page_key_beyond_frontier)
  // the source keys beyond the frontier of the transform's source ranges
  // are not parked: the frontier row is read FOR SHARE, so the range that
  // holds such a key is handed out after this page commits and reads the
  // change under a later snapshot (docs/architecture.md, "Building by
  // ranges", step 4).
  std::string park_statement(const std::string& page_table, const std::string& whole_roots_table,
                             const std::string& page_key_slot,
                             const std::string& beyond_frontier) const;
  DrainFailureStatements drain_failure_statements() const;

 private:
  std::string transforms_;
  std::string captured_tables_;
  std::string held_keys_;
  std::string parked_keys_;
  std::string range_frontiers_;
  std::string workers_;
  std::string not_claimed_by_ranges_;  // over alias c
  std::string range_candidates_;
  std::string waits_for_upstream_;  // over alias t
};

}  // namespace trellis::catalog
