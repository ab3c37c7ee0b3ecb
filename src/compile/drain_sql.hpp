// Fixed statements of the drain loop (claiming ring buckets, filling a page
// from a ring slot, recording progress), rendered for one catalog schema.
// The build's statements change a transform's row, so they are the
// catalog's (catalog/lifecycle.hpp).
#pragma once

#include <string>
#include <vector>

namespace trellis::compile {

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
};

DrainSql compile_drain(const std::string& catalog_schema);

}  // namespace trellis::compile
