// The range claims' statements (range_claims.hpp).
#include "catalog/range_claims.hpp"

#include <fmt/format.h>

#include "catalog/claims.hpp"

namespace trellis::catalog {

namespace {

std::string by_ranges(const std::string& prefix) {
  return fmt::format("{0}status = {1} AND {0}build_phase IN ({2}, {3})", prefix,
                     literal(Status::backfilling), literal(BuildPhase::ranges),
                     literal(BuildPhase::group_ranges));
}

}  // namespace

std::string rows_done_by_claims(const std::string& claims_table, const std::string& transform,
                                const std::string& fence) {
  return fmt::format(
      "(SELECT coalesce(sum(__c.rows_done), 0) FROM {} __c WHERE __c.transform_id = {} AND "
      "__c.fence = {} AND __c.done)",
      claims_table, transform, fence);
}

std::string not_claimed_by_ranges(const Store& store, const std::string& row) {
  return fmt::format(
      "({0}.build_phase NOT IN ({1}, {2}) OR EXISTS (SELECT 1 FROM {3} __f WHERE __f.transform_id "
      "= {0}.id AND __f.fence = {0}.build_fence AND __f.chunked))",
      row, literal(BuildPhase::ranges), literal(BuildPhase::group_ranges),
      store.table("range_frontiers"));
}

RangeClaimStatements range_claim_statements(const Store& store) {
  std::string transforms = store.table("transforms");
  std::string frontiers = store.table("range_frontiers");
  std::string claims = store.table("range_claims");
  RangeClaimStatements s;
  s.candidates = fmt::format(
      "SELECT t.id FROM {0} t WHERE ({1} OR (t.status = {3} AND t.build_phase = {4})) AND "
      "(t.build_not_before IS NULL OR t.build_not_before <= now()) AND NOT EXISTS (SELECT 1 FROM "
      "{2} f WHERE f.transform_id = t.id AND f.fence = t.build_fence AND f.chunked) ORDER BY t.id",
      transforms, by_ranges("t."), frontiers, literal(Status::backfilling),
      literal(BuildPhase::parked));
  s.open_frontier = fmt::format(
      "INSERT INTO {} (transform_id, fence, cursor) SELECT id, build_fence, build_cursor FROM {} "
      "WHERE id = $1::int AND build_fence IS NOT NULL ON CONFLICT (transform_id) DO NOTHING",
      frontiers, transforms);
  s.lock_frontier = fmt::format(
      "SELECT f.fence IS NOT DISTINCT FROM t.build_fence, t.version = $2::int AND {2} AND "
      "t.build_fence IS NOT NULL, t.build_fence::text, "
      "t.build_phase, f.cursor, f.at_end, f.chunked, f.next_seq, t.build_rows_done FROM {0} f JOIN "
      "{1} t ON t.id = "
      "f.transform_id WHERE f.transform_id = $1::int FOR UPDATE OF f",
      frontiers, transforms, by_ranges("t."));
  s.reset_frontier = fmt::format(
      "WITH gone AS (DELETE FROM {0} c USING {1} t WHERE c.transform_id = $1::int AND t.id = "
      "$1::int AND c.fence IS DISTINCT FROM t.build_fence) UPDATE {2} f SET fence = t.build_fence, "
      "cursor = t.build_cursor, at_end = false, chunked = false, next_seq = 0 FROM {1} t WHERE "
      "f.transform_id = $1::int AND t.id = $1::int AND t.build_fence IS NOT NULL",
      claims, transforms, frontiers);
  s.take_over = fmt::format(
      "UPDATE {0} c SET (owner_pid, owner_start) = ({1}) WHERE c.transform_id = $1::int AND "
      "c.fence = $2::timestamptz AND c.seq = (SELECT o.seq FROM {0} o WHERE o.transform_id = "
      "$1::int AND o.fence = $2::timestamptz AND NOT o.done AND (o.owner_pid IS NULL OR {2}) "
      "ORDER BY o.seq LIMIT 1) RETURNING c.seq, c.lo, c.hi",
      claims, kThisBackend, owner_gone("o.owner_pid", "o.owner_start"));
  s.any_not_done = fmt::format(
      "SELECT EXISTS (SELECT 1 FROM {} WHERE transform_id = $1::int AND fence = $2::timestamptz "
      "AND NOT done)",
      claims);
  s.add_claim = fmt::format(
      "WITH claim AS (INSERT INTO {0} (transform_id, fence, seq, lo, hi, owner_pid, owner_start) "
      "VALUES ($1::int, $2::timestamptz, $3::int, $4::text[], $5::text[], {2})) UPDATE {1} SET "
      "cursor = $5::text[], at_end = $5::text[] IS NULL, next_seq = $3::int + 1 WHERE "
      "transform_id = $1::int",
      claims, frontiers, kThisBackend);
  std::string counted = rows_done_by_claims(claims, "$1::int", "$2::timestamptz");
  s.finish_phase = fmt::format(
      "WITH counted AS (SELECT {3} AS n), gone AS (DELETE FROM {0} WHERE transform_id = $1::int), "
      "frontier AS (DELETE FROM {1} WHERE transform_id = $1::int) UPDATE {2} SET build_rows_done "
      "= build_rows_done + (SELECT n FROM counted), backfill_failure = NULL WHERE id = $1::int",
      claims, frontiers, transforms, counted);
  s.range_check = fmt::format(
      "SELECT build_sweep_target FROM {} t WHERE id = $1::int AND version = $2::int AND "
      "build_fence = $3::timestamptz AND build_phase = $4 AND {} FOR SHARE",
      transforms, by_ranges("t."));
  s.lock_claim = fmt::format(
      "SELECT 1 FROM {} WHERE transform_id = $1::int AND fence = $2::timestamptz AND seq = $3::int "
      "AND owner_pid = pg_backend_pid() AND NOT done FOR UPDATE",
      claims);
  s.complete_claim = fmt::format(
      "UPDATE {} SET done = true, rows_done = $4::bigint, owner_pid = NULL, owner_start = NULL "
      "WHERE transform_id = $1::int AND fence = $2::timestamptz AND seq = $3::int",
      claims);
  s.release_claim = fmt::format(
      "UPDATE {} SET owner_pid = NULL, owner_start = NULL WHERE transform_id = $1::int AND fence = "
      "$2::timestamptz AND seq = $3::int AND owner_pid = pg_backend_pid()",
      claims);
  s.lock_for_chunks = fmt::format(
      "SELECT 1 FROM {0} t WHERE id = $1::int AND build_fence = $2::timestamptz AND {2} AND "
      "EXISTS (SELECT 1 FROM {1} f WHERE f.transform_id = $1::int AND f.fence = $2::timestamptz) "
      "FOR NO KEY UPDATE",
      transforms, frontiers, by_ranges("t."));
  // The chunk path starts at the lower bound of the first range not done
  // (NULL: the start), or at the frontier when every range claimed is done;
  // from the start when that is a heap block of a phase that folds (the
  // chunk path recomputes each group whole, so the ranges folded before are
  // overwritten, not added to).
  s.to_chunks = fmt::format(
      "WITH f AS (SELECT cursor FROM {1} WHERE transform_id = $1::int FOR UPDATE), first AS "
      "(SELECT lo FROM {0} WHERE transform_id = $1::int AND fence = $2::timestamptz AND NOT done "
      "ORDER BY seq LIMIT 1), counted AS (SELECT {4} AS n), gone AS (DELETE FROM {0} "
      "WHERE transform_id = $1::int), chunked AS (UPDATE {1} SET chunked = true WHERE "
      "transform_id = $1::int) UPDATE {2} SET build_cursor = (SELECT CASE WHEN c[1] = 'ctid' AND "
      "cardinality(c) = 2 THEN NULL ELSE c END FROM (SELECT CASE WHEN EXISTS (SELECT 1 FROM "
      "first) THEN (SELECT lo FROM first) ELSE (SELECT cursor FROM f) END AS c) __c), "
      "build_rows_done = "
      "build_rows_done + (SELECT n FROM counted), (build_owner_pid, build_owner_start) = ({3}) "
      "WHERE id = $1::int",
      claims, frontiers, transforms, kThisBackend, counted);
  return s;
}

}  // namespace trellis::catalog
