// Seal, fence, promote and retire; see ring.hpp. The order of the seal steps
// is what makes a segment complete (invariant I3): commit the registry change,
// publish the next segment in the sequence, then take a fresh xid as the
// fence. Every writer that read the old segment number had its xid earlier.
#include "ring/ring.hpp"

#include <fmt/format.h>

#include "base/process_metrics.hpp"
#include "base/sql_text.hpp"
#include "catalog/ring_geometry.hpp"
#include "compile/drain_sql.hpp"
#include "pg/lock_timeout.hpp"
#include "pg/sql_error.hpp"

namespace trellis::ring {

using base::ident;
using base::qualified;

std::string slot_has_rows(const std::string& catalog_schema, const std::string& seg_expr) {
  std::string cases;
  for (int s = 0; s < catalog::kRingSlots; ++s)
    cases += fmt::format(" WHEN {} THEN EXISTS (SELECT 1 FROM {})", s,
                         qualified(catalog_schema, catalog::ring_slot_table(s)));
  return fmt::format("CASE {} % {}{} END", seg_expr, catalog::kRingSlots, cases);
}

Ring::Ring(RingConfig config) : config_(std::move(config)) {}

std::string Ring::table(const char* name) const {
  return qualified(config_.schema, name);
}

std::string Ring::slot_table(int64_t segment) const {
  return qualified(config_.schema, catalog::ring_slot_table(catalog::ring_slot(segment)));
}

Ring::Probe Ring::probe(pg::Connection& conn) {
  auto r = conn.exec_prepared(fmt::format(
      "SELECT {0}, EXISTS (SELECT 1 FROM {1} s WHERE s.state NOT IN "
      "('active', 'retired') OR (s.state = 'active' AND s.seg <> a.seg) OR (s.state = 'retired' "
      "AND s.drained_at < now() - interval '10 minutes')) FROM (SELECT "
      "pg_sequence_last_value({2}::regclass) AS seg) a",
      slot_has_rows(config_.schema, "a.seg"), table("segments"),
      base::literal(table("active_segment"))));
  return {r.get_bool(0, 0), r.get_bool(0, 1)};
}

void Ring::recover(pg::Connection& conn) {
  // setval only when behind: it writes WAL, and this runs every tick.
  conn.exec(fmt::format(
      "SELECT setval({0}::regclass, a.seg, true) FROM (SELECT max(seg) AS seg FROM {1} WHERE "
      "state = 'active') a WHERE a.seg > pg_sequence_last_value({0}::regclass)",
      base::literal(table("active_segment")), table("segments")));
  conn.exec(fmt::format(
      "UPDATE {} SET fence = pg_current_xact_id() WHERE state = 'sealed' AND fence IS NULL",
      table("segments")));
}

bool Ring::seal(pg::Connection& conn) {
  auto cur = conn.exec(fmt::format("SELECT pg_sequence_last_value({}::regclass)",
                                   base::literal(table("active_segment"))));
  int64_t seg = cur.get_int(0, 0);
  auto probe = conn.exec(fmt::format("SELECT EXISTS (SELECT 1 FROM {}), NOT EXISTS (SELECT 1 FROM "
                                     "{} WHERE seg = $1::bigint AND "
                                     "state <> 'retired')",
                                     slot_table(seg), table("segments")),
                         {std::to_string(seg + 1 - catalog::kRingSlots)});
  if (!probe.get_bool(0, 0) || !probe.get_bool(0, 1)) return false;
  {
    pg::Transaction txn(conn);
    conn.exec(
        fmt::format("UPDATE {} SET state = 'sealed', sealed_at = now() WHERE seg = $1::bigint AND "
                    "state = 'active'",
                    table("segments")),
        {std::to_string(seg)});
    conn.exec(fmt::format("INSERT INTO {} (seg, state) VALUES ($1::bigint, 'active') ON CONFLICT "
                          "(seg) DO UPDATE SET state = 'active', fence = NULL, into_seg = NULL, "
                          "sealed_at = NULL, drained_at = NULL",
                          table("segments")),
              {std::to_string(seg + 1)});
    txn.commit();
  }
  conn.exec(fmt::format("SELECT setval({}::regclass, $1::bigint, true)",
                        base::literal(table("active_segment"))),
            {std::to_string(seg + 1)});
  conn.exec(fmt::format("UPDATE {} SET fence = pg_current_xact_id() WHERE seg = $1::bigint",
                        table("segments")),
            {std::to_string(seg)});
  return true;
}

// A slot larger than this gets a page index when its segment is promoted: with
// it each drain page reads its keys in order instead of scanning the slot, so
// draining a large backlog is not quadratic in the segment's size. Small
// segments (the steady state, ~one tick of writes) are cheaper to scan than to
// index. The index exists only while the segment is immutable (fenced) and is
// dropped when the slot is truncated, so captured writes never maintain it.
constexpr int64_t kPageIndexMinBytes = 2 << 20;

std::string Ring::page_index(int64_t segment) const {
  return catalog::ring_slot_table(catalog::ring_slot(segment)) + "_page";
}

void Ring::index_large_slot(pg::Connection& conn, int64_t segment) {
  bool large =
      conn.exec(fmt::format("SELECT pg_relation_size($1::regclass) >= {}", kPageIndexMinBytes),
                {slot_table(segment)})
          .get_bool(0, 0);
  if (!large) return;  // the usual case: one statement, no savepoint
  pg::Savepoint savepoint(conn, "trellis_page_index");
  try {
    pg::set_local_lock_timeout(conn);
    conn.exec(fmt::format("CREATE INDEX IF NOT EXISTS {} ON {} (bucket, {}) WHERE {}",
                          ident(page_index(segment)), slot_table(segment), compile::kRingPageOrder,
                          compile::kRingHasKey));
    // Slots are never auto-analyzed; without statistics the planner guesses
    // a bucket holds a few dozen rows and sorts them all per page. The page
    // fill's estimates read only these two columns (a row comparison is
    // estimated by its first column), and leaving out the key's array
    // statistics takes ANALYZE of a 30,000-row slot from ~100 ms to ~10 ms.
    conn.exec("ANALYZE " + slot_table(segment) + " (bucket, tbl)");
    savepoint.release();
  } catch (const pg::SqlError& e) {
    if (e.failure_class() != pg::FailureClass::transient) throw;
    savepoint.rollback();  // drains scan the slot instead
  }
}

int Ring::promote_fenced(pg::Connection& conn) {
  auto fenced =
      conn.exec(fmt::format("SELECT seg FROM {} WHERE state = 'sealed' AND fence IS NOT NULL AND "
                            "fence < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY seg",
                            table("segments")));
  for (int i = 0; i < fenced.rows(); ++i) {
    std::string seg = fenced.get(i, 0);
    int64_t segment = std::stoll(seg);
    pg::Transaction txn(conn);
    index_large_slot(conn, segment);
    // Grouped by bucket and table first, then by bucket: two hash
    // aggregates, where array_agg(DISTINCT) sorted every ring row of a
    // bucket (0.6-0.9 s against 0.2-0.3 s for a 1M-row slot).
    auto listed = conn.exec(
        fmt::format("INSERT INTO {} (seg, bucket, tables, truncated, ring_rows) SELECT $1::bigint, "
                    "bucket, array_agg(tbl ORDER BY tbl), array_agg(tbl ORDER BY tbl) FILTER "
                    "(WHERE truncated), sum(n) FROM (SELECT bucket, tbl, bool_or(op = 't') AS "
                    "truncated, count(*) AS n FROM {} GROUP BY bucket, tbl) __t GROUP BY bucket "
                    "RETURNING ring_rows",
                    table("buckets"), slot_table(segment)),
        {seg});
    conn.exec(fmt::format("UPDATE {} SET state = $2 WHERE seg = $1::bigint", table("segments")),
              {seg, listed.affected() > 0 ? "ready" : "drained"});
    txn.commit();
    int64_t captured = 0;
    for (int b = 0; b < listed.rows(); ++b) captured += listed.get_int(b, 0);
    base::ProcessMetrics::of(config_.schema).changes_captured(static_cast<double>(captured));
  }
  return fenced.rows();
}

int Ring::retire(pg::Connection& conn) {
  conn.exec(fmt::format(
      "UPDATE {0} s SET state = 'drained', drained_at = now(), "
      "into_seg = (SELECT max(b.into_seg) FROM {1} b WHERE b.seg = s.seg) "
      "WHERE s.state = 'ready' AND NOT EXISTS (SELECT 1 FROM {1} b WHERE b.seg = s.seg AND NOT "
      "b.done)",
      table("segments"), table("buckets")));
  auto drained = conn.exec(
      fmt::format("SELECT seg FROM {} WHERE state = 'drained' ORDER BY seg", table("segments")));
  int retired = 0;
  for (int i = 0; i < drained.rows(); ++i) {
    std::string seg = drained.get(i, 0);
    bool truncated = false;
    try {
      truncated = pg::try_under_lock_timeout(conn, [&] {
        conn.exec("DROP INDEX IF EXISTS " + qualified(config_.schema, page_index(std::stoll(seg))));
        conn.exec("TRUNCATE " + slot_table(std::stoll(seg)));
        conn.exec(fmt::format("UPDATE {} SET state = 'retired' WHERE seg = $1::bigint",
                              table("segments")),
                  {seg});
        conn.exec(fmt::format("DELETE FROM {} WHERE seg = $1::bigint", table("buckets")), {seg});
      });
    } catch (const pg::SqlError& e) {
      if (e.failure_class() != pg::FailureClass::transient) throw;
    }
    if (!truncated) break;  // a reader still holds the slot; retry on the next tick
    ++retired;
  }
  conn.exec(
      fmt::format("DELETE FROM {} WHERE state = 'retired' AND drained_at < now() - "
                  "interval '10 minutes'",
                  table("segments")));
  return retired;
}

}  // namespace trellis::ring
