// Range claims (migration 0007): the ranges of a build phase that writes by
// ranges (ranges, group_ranges) are claimed one at a time by any drain
// thread of any process, so one build runs on all of them at once.
//
// A claim is taken in a short transaction of its own, under the lock of the
// transform's frontier row (the upper bound of the last range claimed), and
// committed before its range runs; the range's own transaction holds the
// transforms row FOR SHARE (shared with the other ranges, so every status
// change waits for the ranges running, as it waited for the single range
// before) and marks its claim done in the commit of the rows it wrote. A
// claim whose backend is gone, or that its backend let go after a transient
// error, is taken over by the next claimer. The claimer that finds the last
// range claimed and every claim done moves the phase on. A range that fails
// otherwise than transiently, or a transform that holds keys, turns the rest
// of the phase over to the keyset-chunk path of the build's owner
// (`to_chunks`), from the first range not done. Locks are taken in one
// order per transaction kind so that none waits in a cycle: claimers lock
// the frontier, then read (the phase move then updates the transforms row,
// only when no range is running); ranges lock the transforms row, then
// their own claim; `to_chunks` locks the transforms row, then the frontier.
#pragma once

#include <string>

#include "catalog/store.hpp"

namespace trellis::catalog {

struct RangeClaimStatements {
  // -> id of each transform in a phase by ranges that claims may work on
  // (building, not backing off after a failure, not turned over to chunks),
  // and of each in its parked phase, whose parked keys every thread
  // discharges by key slots; read with the build claim, in the same
  // statement.
  std::string candidates;
  // $1 id: the frontier row of the transform's current fence, created when
  // there is none (a no-op while the fence is not set). It starts at the
  // transforms row's build_cursor: NULL for a phase begun by this version
  // (claims never move it), the last range written by a build of an
  // earlier version, which ran one range at a time and kept it there.
  std::string open_frontier;
  // $1 id, $2 version, locks the frontier -> frontier of the current fence,
  // transform still at this version and building by ranges, fence (text),
  // phase, cursor, at_end, chunked, next_seq, build_rows_done (the source
  // rows the build has written so far: an aggregate's ledger entries once
  // its source ranges are done).
  std::string lock_frontier;
  // $1 id: clears the claims of other fences and starts the frontier over
  // at the current fence.
  std::string reset_frontier;
  // $1 id, $2 fence: takes over the first claim not done whose backend is
  // gone or let it go -> seq, lo, hi.
  std::string take_over;
  // $1 id, $2 fence -> some claim is not done.
  std::string any_not_done;
  // $1 id, $2 fence, $3 seq, $4 lo, $5 hi: a claim of this backend, the
  // frontier moved to $5.
  std::string add_claim;
  // $1 id, $2 fence: the phase is done; its claims' rows are counted into
  // the transform and its claims and frontier removed.
  std::string finish_phase;
  // $1 id, $2 version, $3 fence, $4 phase, locks the transforms row FOR
  // SHARE -> rebuild over the target (build_sweep_target); no row when the
  // transform moved on.
  std::string range_check;
  // $1 id, $2 fence, $3 seq: locks this backend's claim, not done.
  std::string lock_claim;
  // $1 id, $2 fence, $3 seq, $4 rows: the claim's range is written.
  std::string complete_claim;
  // $1 id, $2 fence, $3 seq: this backend lets its claim go.
  std::string release_claim;
  // $1 id, $2 fence, in one transaction: lock the transforms row (waits
  // for the ranges running), then the frontier; then hand the rest of the
  // phase to the chunk path, owned by this backend, from the first range not
  // done (its claims removed, the rows of those done counted).
  std::string lock_for_chunks;
  std::string to_chunks;
};

RangeClaimStatements range_claim_statements(const Store& store);

// The build claim's condition that keeps the keyset-chunk path off a phase
// by ranges that claims are working on (`row`: the transforms row's alias).
std::string not_claimed_by_ranges(const Store& store, const std::string& row);

// A scalar subquery: the rows written by the done claims of the phase of
// transform `transform` (an SQL expression) behind fence `fence`, which the
// transform's build_rows_done does not count yet.
std::string rows_done_by_claims(const std::string& claims_table, const std::string& transform,
                                const std::string& fence);

}  // namespace trellis::catalog
