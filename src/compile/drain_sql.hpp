// Fixed statements of the drain and build loops (claiming work, filling a
// page from a ring slot, recording progress), rendered for one catalog schema.
#pragma once

#include <string>
#include <vector>

namespace trellis::compile {

// The SET list of an UPDATE of transforms that rebuilds a running transform
// in place: back to `backfilling`, every source key and every key its target
// holds re-derived from the start (a build still awaiting capture keeps
// waiting for it first).
inline constexpr const char* kRebuildInPlace =
    "status = 'backfilling', build_phase = CASE WHEN build_phase = 'awaiting_capture' THEN "
    "build_phase ELSE 'source' END, build_fields = NULL, build_cursor = NULL, build_sweep_target "
    "= true, build_rows_done = 0, build_owner_pid = NULL, build_owner_start = NULL, "
    "build_not_before = NULL, backfill_failure = NULL, updated_at = now()";

// The SET list that pauses a transform (PAUSE, a drift pause, a halt): the
// status, and any build claim let go so the build does not go on.
inline constexpr const char* kPause =
    "status = 'paused', build_owner_pid = NULL, build_owner_start = NULL, updated_at = now()";

// A ring row's key as drains order it ([tbl] || key), and the condition that
// the row carries a key (a TRUNCATE sentinel does not). The slot's page index
// (ring/ring.cpp) is on exactly these expressions, so the page fill can read
// it in order. Unqualified, since an index expression cannot name an alias.
inline constexpr const char* kRingPageKey = "(ARRAY[tbl::text] || key)";
inline constexpr const char* kRingHasKey = "key IS NOT NULL";

// Claimed buckets are passed as $2, an int2[] of the claim's buckets.
struct DrainSql {
  std::string claim_bucket;  // $1 page cap -> (seg, bucket) per claimed bucket
  // $1 seg, $2 buckets: ownership, locking the claim rows -> per bucket, the
  // tables truncated (first page only)
  std::string check_bucket;
  std::string bucket_tables;  // $1 seg, $2 buckets -> int[] table ids in them
  // Indexed by ring slot; $1 seg, $2 buckets, $3 cap -> (count, last cursor, tables):
  std::vector<std::string> fill_page;   // a claim of one bucket
  std::vector<std::string> fill_pages;  // a claim of several
  std::string finish_page;              // $1 seg, $2 buckets, $3 cursor, $4 done, $5 fed downstream
  std::string fail_bucket;              // $1 seg, $2 buckets: release with backoff
  std::string retry_bucket;             // $1 seg, $2 buckets, $3 ms: release, retry after $3 ms
  std::string record_drain_failure;     // $1 int[] tables, $2 error, $3 sqlstate
  std::string clear_drain_failure;      // $1 int[] tables
  std::string claim_build;              // -> id, build_phase, build_cursor, build_sweep_target
  std::string check_build;              // $1 id, $2 version -> phase, cursor, sweep, fields
  std::string advance_build;            // $1 id, $2 cursor
  std::string next_build_phase;         // $1 id, $2 the next phase (target | groups)
  std::string finish_build;             // $1 id: live
  std::string fail_build;               // $1 id, $2 error json
  std::string retry_build;              // $1 id, $2 error json, $3 ms: release, retry after $3 ms
};

DrainSql compile_drain(const std::string& catalog_schema);

}  // namespace trellis::compile
