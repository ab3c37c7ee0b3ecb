// Fixed statements of the drain loop (claiming ring buckets, filling a page
// from a ring slot, recording progress), rendered for one catalog schema.
// The build's statements change a transform's row, so they are the
// catalog's (catalog/lifecycle.hpp).
#pragma once

#include <string>
#include <vector>

namespace trellis::compile {

// The order in which drains read a bucket's keys, and the condition that a
// ring row carries a key (a TRUNCATE sentinel does not). The slot's page
// index (ring/ring.cpp) is on (bucket, kRingPageOrder), so the page fill
// reads it in order. It is key order: (tbl, key) with the key's first part
// (NULL read as '', compared by bytes) put before the whole key, which
// changes nothing but the cost. A page's keys lie close together in the
// source and the target, and in the ring, whose rows a large statement wrote
// in about that order; sorting a segment's rows (to build the index, or to
// fill a page of a small bucket) compares one text almost always and the
// text[] only on a tie, ~2.5x cheaper than comparing text[] values alone.
// No column is NULL, so a row comparison with a cursor is never unknown. A
// bucket's cursor is the last row read, as [tbl] || key. Unqualified, since
// an index expression cannot name an alias.
inline constexpr const char* kRingKeyFirstPart = "(coalesce(key[1], '') COLLATE \"C\")";
inline const std::string kRingPageOrder = std::string("tbl, ") + kRingKeyFirstPart + ", key";
inline constexpr const char* kRingHasKey = "key IS NOT NULL";

// Claimed buckets are passed as an int2[] of the claim's buckets ($2, or $1
// in the fills).
struct DrainSql {
  // $1 page cap -> (seg, bucket, ring rows) per claimed bucket, or one row
  // of NULLs when none was claimed though a ready bucket is unowned.
  std::string claim_bucket;
  // $1 seg, $2 buckets: ownership, locking the claim rows -> per bucket, the
  // tables truncated (first page only) and the cursor
  std::string check_bucket;
  std::string bucket_tables;  // $1 seg, $2 buckets -> int[] table ids in them
  // Indexed by ring slot; $1 buckets, $2 cap, $3 cursor -> (count, last cursor, tables):
  std::vector<std::string> fill_page;   // a claim of one bucket
  std::vector<std::string> fill_pages;  // a claim of several
  // Around the fill of a bucket larger than a page: the planner, costing each heap fetch of an
  // index scan as a random read, would sort a bucket's remaining rows (a bitmap scan) for each page
  // rather than read the first page_cap of them in index order; the slot was just written and is in
  // memory, so the ordered scan is the cheap one. Taken for the fill statement only, and sent
  // with it in one pipeline.
  std::vector<std::string> before_fill;
  std::vector<std::string> after_fill;
  // After the keys of a joined table were mapped to more than
  // kAnalyzePageAbove source keys (a dimension row read by many rows): the
  // page table, never analysed, is estimated at a few hundred rows, so the
  // re-derive would probe the source and the target once per key by index;
  // with statistics it hashes them (100,000 keys: 2.1 s by index).
  std::string analyze_page;
  static constexpr int64_t kAnalyzePageAbove = 20000;
  // $1 seg, $2 buckets, $3 cursor, $4 done, $5 fed downstream -> per
  // bucket, the seconds since the segment opened (the previous one's seal)
  std::string finish_page;
  std::string fail_bucket;   // $1 seg, $2 buckets: release with backoff
  std::string retry_bucket;  // $1 seg, $2 buckets, $3 ms: release, retry after $3 ms
};

DrainSql compile_drain(const std::string& catalog_schema);

}  // namespace trellis::compile
