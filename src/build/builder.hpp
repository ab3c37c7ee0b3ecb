// The build (docs/architecture.md, data path step 7): once capture is
// installed, a drain thread claims a backfilling transform and builds it one
// short transaction at a time. A 1-1 target (an aggregate's ledger) is
// written by key ranges, one set-based statement per range, and an
// aggregate's groups by ranges of the ledger's group index, while drains
// park the keys they read; the parked keys are then re-derived with the
// drain's statements before the transform goes live. Field builds, ranges
// that fail with a data error and transforms holding keys go by keyset
// chunks through the drain's own re-derive statements (lock, then derive:
// invariant I1).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "apply/quarantine.hpp"
#include "apply/rederive.hpp"
#include "catalog/lifecycle.hpp"
#include "catalog/range_claims.hpp"
#include "catalog/store.hpp"
#include "pg/connection.hpp"
#include "pg/sql_error.hpp"

namespace trellis::build {

struct BuildConfig {
  int chunk_rows = 5000;      // keys per keyset chunk (I8)
  int range_rows = 50000;     // source rows per range statement
  int discharge_keys = 5000;  // parked keys re-derived per transaction
  // This process's drain threads: a ledger whose groups are written without
  // its group index is split into this many parts, one per thread.
  int threads = 1;
};

class Builder {
 public:
  Builder(catalog::Store& store, BuildConfig config);
  // Claims a backfilling transform (or keeps the one this connection owns)
  // and runs one range or chunk. Returns false when there was nothing to
  // build.
  bool build_one_chunk(pg::Connection& conn);

 private:
  // Creating a ledger's indexes failed (no space left, a duplicate key):
  // the build's failure, as a chunk's is.
  struct LedgerIndexFailure {
    pg::SqlError error;
    std::string when;  // "at the end of phase ranges"
  };
  void report_ledger_index_failure(pg::Connection& conn, const catalog::TransformDef& def,
                                   const LedgerIndexFailure& f);
  // The chunk this connection's claim is at, its page filled.
  struct Chunk {
    catalog::BuildPhase phase = catalog::BuildPhase::source;
    pg::Param upper;  // the chunk's last key (group); nothing on the phase's last chunk
    // The phase after this chunk (none when the build is done).
    std::optional<catalog::BuildPhase> next;
    apply::TransformWork work;
  };
  // Waits (briefly) for the fence of a phase that needs one; false when it
  // has not passed yet.
  bool fence_passed(pg::Connection& conn, int id);
  // A range of some transform in a phase by ranges (catalog/range_claims):
  // claims one and runs it, or moves a phase whose ranges are all done on.
  // False when no such work is left for this thread.
  bool build_a_range(pg::Connection& conn, const std::set<int>& candidates);
  // Parked keys of `def` in its parked phase, up to a transaction's worth
  // from key slots no other thread holds, re-derived by this thread
  // whether or not it holds the build claim: the discharge runs on every
  // drain thread, and the claimant's chunks take what is left and end the
  // phase.
  enum class Discharge { not_parked, nothing, done };
  Discharge discharge_by_slots(pg::Connection& conn, const catalog::TransformDef& def);
  // Keys of the tables that fan out were parked as they were captured:
  // mapped now, they re-derive the pairs they reach (drainer.cpp).
  void map_parked_fanning_keys(pg::Connection& conn, const catalog::TransformDef& def);
  struct RangeClaim {
    std::string fence;  // the phase's build_fence, as text
    catalog::BuildPhase phase = catalog::BuildPhase::ranges;
    int seq = 0;
    pg::Param lo, hi;  // (lo, hi]; nothing: an open end
    // A group range that is a part of a ledger split by a sample of its
    // groups (compile::TransformSql::group_split_bound), read by its heap.
    bool ledger_part = false;
  };
  struct RangeClaimResult {
    std::optional<RangeClaim> range;    // the claim taken, committed
    bool phase_moved = false;           // every range was done: the phase moved on
    bool group_ranges_running = false;  // every group range is claimed, some not done
  };
  RangeClaimResult claim_range(pg::Connection& conn, const catalog::TransformDef& def);
  // The claim's range in one transaction, marked done in its commit. A
  // transient failure lets the claim go (the next claimer retries it); any
  // other failure, or held keys, turns the rest of the phase over to keyset
  // chunks, whose path finds and charges a failing key (or halts, or
  // reports) as for any chunk.
  void run_claimed_range(pg::Connection& conn, const catalog::TransformDef& def,
                         const RangeClaim& claim);
  std::optional<Chunk> fill_chunk(pg::Connection& conn, const catalog::TransformDef& def);
  void run_chunk(pg::Connection& conn, const catalog::TransformDef& def);
  // After the commit that made it live, by the range or the chunk path:
  // the `live` log line, then analyze_tables.
  void went_live(pg::Connection& conn, const catalog::TransformDef& def);
  // ANALYZE of the tables a build wrote, once the transform is live
  // (compile TransformSql::analyze); a failure only leaves the plans to
  // autovacuum's statistics.
  void analyze_tables(pg::Connection& conn, const catalog::TransformDef& def);

  catalog::Store& store_;
  BuildConfig config_;
  catalog::BuildStatements sql_;
  catalog::RangeClaimStatements ranges_;
  apply::Rederiver rederiver_;
  apply::Quarantine quarantine_;
  // Transforms whose slot discharge failed, not helped again before then:
  // the claimant's chunk path meets the failure and charges or reports it.
  std::map<int, std::chrono::steady_clock::time_point> discharge_backoff_;
};

}  // namespace trellis::build
