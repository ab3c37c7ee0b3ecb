// Renders the drain loop statements; see drain_sql.hpp. Claims go to buckets
// whose owner connection is gone (catalog/claims.hpp), so a crashed
// process's work is reclaimed at once.
#include "compile/drain_sql.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "catalog/claims.hpp"
#include "catalog/ring_geometry.hpp"
#include "compile/shared_sql.hpp"
#include "compile/transform_sql.hpp"

namespace trellis::compile {

using base::literal;
using base::qualified;

DrainSql compile_drain(const std::string& cs) {
  DrainSql s;
  std::string buckets = qualified(cs, "buckets");
  std::string active = literal(qualified(cs, "active_segment")) + "::regclass";
  // Claims the first claimable bucket and, when that one starts fresh, the
  // fresh buckets after it in the same segment while their ring rows fit in
  // one page ($1): a small segment (the steady state, one tick of writes) is
  // drained as one page rather than one per bucket. A bucket past its first
  // page is claimed alone, so the buckets of a claim always share a cursor.
  // The candidates are locked (SKIP LOCKED) while the claim runs, so a
  // thread claiming at the same moment (both woken by one promotion) finds
  // none of them: when it claims nothing while some bucket is ready and
  // unowned, it gets one row of NULLs and tries again at once instead of
  // sleeping until the next notification or poll. A segment whose fresh
  // buckets need several pages is split into claims of equally many
  // buckets, as many as a multiple of the process's drain threads ($2), so
  // the threads finish it together: with two threads, a 10,000-row segment
  // goes as four claims of four of its 16 buckets (~2,500 rows), not as
  // 3,750, 3,750 and 2,500, the last alone. The share is a number of
  // buckets (they hold about as many rows each, by hash), computed from
  // every bucket of the segment (the claimed and the done ones too), so
  // every claimant takes the same; with one thread the claims are the ones
  // the page cap alone gives, and a segment that fits in one page is
  // claimed whole as before.
  s.claim_bucket = fmt::format(
      "WITH cand AS (SELECT c.seg, c.bucket, c.cursor, c.ring_rows FROM {0} c WHERE NOT c.done "
      "AND (c.not_before IS NULL OR c.not_before <= now()) AND (c.owner_pid IS NULL OR "
      "c.owner_pid = pg_backend_pid() OR {2}) ORDER BY c.seg, c.bucket LIMIT 256 FOR UPDATE SKIP "
      "LOCKED), ranked AS (SELECT seg, bucket, cursor IS NULL AS fresh, row_number() OVER w AS n, "
      "sum(coalesce(ring_rows, $1::int + 1)) OVER w AS run, first_value(seg) OVER w AS first_seg, "
      "first_value(cursor IS NULL) OVER w AS first_fresh FROM cand WINDOW w AS (ORDER BY seg, "
      "bucket)), share AS (SELECT CASE WHEN t.total <= $1::int THEN t.buckets ELSE "
      "ceil(t.buckets / (ceil(ceil(t.total / $1::numeric) / $2::int) * $2::int))::int END AS "
      "buckets FROM (SELECT sum(coalesce(b.ring_rows, $1::int + 1)) AS total, count(*) AS "
      "buckets FROM {0} b WHERE b.seg = (SELECT first_seg FROM ranked LIMIT 1)) t), pick AS "
      "(SELECT seg, bucket FROM ranked, share WHERE n = 1 OR (seg = first_seg AND first_fresh "
      "AND fresh AND run <= $1::int AND n <= share.buckets)) "
      ", claimed AS (UPDATE {0} b SET (owner_pid, owner_start) = ({1}) FROM pick WHERE b.seg = "
      "pick.seg AND b.bucket = pick.bucket RETURNING b.seg, b.bucket, b.ring_rows) "
      "SELECT seg, bucket, ring_rows FROM claimed UNION ALL SELECT NULL::bigint, NULL::int2, "
      "NULL::bigint WHERE NOT EXISTS (SELECT 1 FROM claimed) AND EXISTS (SELECT 1 FROM {0} c "
      "WHERE NOT c.done AND (c.not_before IS NULL OR c.not_before <= now()) AND c.owner_pid IS "
      "NULL)",
      buckets, catalog::kThisBackend, catalog::owner_gone("c.owner_pid", "c.owner_start"));
  // The truncated tables matter only to a bucket's first page.
  s.check_bucket = fmt::format(
      "SELECT CASE WHEN cursor IS NULL THEN truncated END, cursor FROM {} WHERE seg = $1::bigint "
      "AND bucket = ANY($2::int2[]) AND owner_pid = pg_backend_pid() AND NOT done FOR UPDATE",
      buckets);
  s.bucket_tables = fmt::format(
      "SELECT array_agg(DISTINCT t) FROM {}, unnest(tables) t WHERE seg = $1::bigint AND bucket = "
      "ANY($2::int2[])",
      buckets);
  // Keys in (bucket, kRingPageOrder) order past the cursor ($3, NULL on a
  // bucket's first page): for one bucket, an ordered scan of the slot's page
  // index when the segment was large enough to get one (ring/ring.cpp), else
  // a scan and sort. DISTINCT ON the order's columns is the distinct keys
  // (tbl, key). The cursor is a parameter, not read by a subquery, so the
  // planner sees how many of the bucket's rows are left: estimated at a
  // third of them, it would sort them all for each page. A missing cursor
  // stands for (0, '', '{""}'), below every row (table ids are positive).
  // The next cursor is the page's last row, found by max() column by column
  // (no sort, which the indexed fill runs without).
  for (int slot = 0; slot < catalog::kRingSlots; ++slot) {
    std::string ring = qualified(cs, catalog::ring_slot_table(slot));
    std::string cursor = "coalesce($3::text[], ARRAY['0', ''])";
    std::string after =
        fmt::format("(({0})[1]::int, (coalesce(({0})[2], '') COLLATE \"C\"), ({0})[2:])", cursor);
    std::string last =
        "(SELECT ARRAY[l.tbl::text] || l.key FROM (SELECT t.tbl, (SELECT max(p.key) FROM pick p "
        "WHERE p.tbl = t.tbl AND p.k1 = t.k1) AS key FROM (SELECT m.tbl, (SELECT max(p.k1) FROM "
        "pick p WHERE p.tbl = m.tbl) AS k1 FROM (SELECT max(tbl) AS tbl FROM pick) m) t) l WHERE "
        "l.tbl IS NOT NULL)";
    // A key with a NULL part names no row: it counts toward the page (so
    // the cursor passes it) but is not re-derived. That filter is applied
    // after the LIMIT so the planner's row estimate for the scan stays
    // high enough for it to read the index in order. The keys the page
    // table lacks are found by EXCEPT, a hashed set operation whatever the
    // estimates: as a NOT EXISTS, estimated at one picked key, it was a
    // nested loop scanning the page table once per key (17 ms of a 21 ms
    // fill of 1,900 keys).
    auto fill = [&](const char* bucket_match) {
      return fmt::format(
          "WITH pick AS (SELECT DISTINCT ON ({3}) tbl, key, {6} AS k1 FROM {0} WHERE {5} AND {4} "
          "AND ({3}) > {1} ORDER BY {3} LIMIT $2::int), usable AS (SELECT tbl, key FROM pick WHERE "
          "array_position(key, NULL) IS NULL), ins AS (INSERT INTO {2} (tbl, key) SELECT tbl, key "
          "FROM usable EXCEPT SELECT tbl, key FROM {2}) SELECT (SELECT count(*) FROM pick), {7}, "
          "(SELECT array_agg(DISTINCT tbl) FROM usable)",
          ring, after, kPageTable, kRingPageOrder, kRingHasKey, bucket_match, kRingKeyFirstPart,
          last);
    };
    s.fill_page.push_back(fill("bucket = ($1::int2[])[1]"));  // an equality: index order
    s.fill_pages.push_back(fill("bucket = ANY($1::int2[])"));
  }
  s.analyze_page = fmt::format("ANALYZE {}", kPageTable);
  s.before_fill = {"SET LOCAL enable_bitmapscan = off", "SET LOCAL enable_sort = off"};
  s.after_fill = {"RESET enable_bitmapscan", "RESET enable_sort"};
  s.finish_page = fmt::format(
      "UPDATE {0} SET cursor = $3::text[], done = $4::bool, attempts = 0, not_before = NULL, "
      "into_seg = CASE WHEN $5::bool THEN greatest(into_seg, pg_sequence_last_value({1})) ELSE "
      "into_seg END "
      "WHERE seg = $1::bigint AND bucket = ANY($2::int2[]) RETURNING extract(epoch FROM "
      "clock_timestamp() - coalesce((SELECT s.sealed_at FROM {2} s WHERE s.seg = $1::bigint - 1), "
      "(SELECT s.sealed_at FROM {2} s WHERE s.seg = $1::bigint)))::float8",
      buckets, active, qualified(cs, "segments"));
  s.fail_bucket = fmt::format(
      "UPDATE {} SET owner_pid = NULL, owner_start = NULL, attempts = attempts + 1, "
      "not_before = now() + least(interval '100 ms' * power(2, least(attempts, 6)), "
      "interval '5 s') WHERE seg = $1::bigint AND bucket = ANY($2::int2[])",
      buckets);
  s.retry_bucket = fmt::format(
      "UPDATE {} SET owner_pid = NULL, owner_start = NULL, not_before = now() + $3::int * "
      "interval '1 ms' WHERE seg = $1::bigint AND bucket = ANY($2::int2[])",
      buckets);
  return s;
}

}  // namespace trellis::compile
