// Self-check job rows; see self_check_jobs.hpp.
#include "catalog/self_check_jobs.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "catalog/claims.hpp"

namespace trellis::catalog {

namespace {

SelfCheckJobRow row_of(const pg::Result& r, int i) {
  SelfCheckJobRow j;
  j.id = r.get_int(i, 0);
  j.transform_id = static_cast<int>(r.get_int(i, 1));
  j.target = r.get(i, 2);
  j.version = static_cast<int>(r.get_int(i, 3));
  j.mode = r.get(i, 4);
  j.await_timeout_ms = static_cast<int>(r.get_int(i, 5));
  j.state = r.get(i, 6);
  j.step = r.get(i, 7);
  j.page_lo = r.get_opt(i, 8);
  j.page_hi = r.get_opt(i, 9);
  if (auto a = r.get_opt(i, 10)) j.awaiting = std::stoll(*a);
  j.await_expired = r.get_bool(i, 11);
  if (auto p = r.get_opt(i, 12)) j.pending = nlohmann::json::parse(*p);
  j.rows_compared = r.get_int(i, 13);
  j.divergences = nlohmann::json::parse(r.get(i, 14));
  j.truncated = r.get_bool(i, 15);
  j.outcome = r.get_opt(i, 16);
  j.status = r.get_opt(i, 17);
  j.detail = r.get_opt(i, 18);
  if (auto c = r.get_opt(i, 19)) j.checked_through = std::stoll(*c);
  j.error = r.get_opt(i, 20);
  j.created_at = r.get(i, 21);
  j.started_at = r.get_opt(i, 22);
  j.finished_at = r.get_opt(i, 23);
  return j;
}

std::string iso(const std::string& column) {
  return fmt::format("to_char({} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')", column);
}

std::optional<std::string> opt_int(const std::optional<int64_t>& v) {
  if (!v) return std::nullopt;
  return std::to_string(*v);
}

}  // namespace

std::string SelfCheckJobs::select_sql(const std::string& where) const {
  return fmt::format(
      "SELECT j.id, j.transform_id, t.target_schema || '.' || t.target_table, j.version, j.mode, "
      "j.await_timeout_ms, j.state, j.step, j.page_lo::text, j.page_hi::text, j.awaiting, "
      "coalesce(j.await_until < clock_timestamp(), false), j.pending::text, j.rows_compared, "
      "j.divergences::text, j.truncated, j.outcome, j.status, j.detail, j.checked_through, "
      "j.error, {}, {}, {} FROM {}.self_check_jobs j JOIN {}.transforms t ON t.id = "
      "j.transform_id {}",
      iso("j.created_at"), iso("j.started_at"), iso("j.finished_at"), base::ident(schema_),
      base::ident(schema_), where);
}

int64_t SelfCheckJobs::enqueue(pg::Connection& conn, int transform_id, int version,
                               const std::string& mode, int await_timeout_ms) {
  std::string jobs = base::ident(schema_) + ".self_check_jobs";
  pg::Transaction txn(conn);
  auto unfinished = conn.exec(
      fmt::format("SELECT id FROM {} WHERE transform_id = $1 AND state IN ('queued', 'running')",
                  jobs),
      {std::to_string(transform_id)});
  if (unfinished.rows() > 0) return unfinished.get_int(0, 0);
  conn.exec(fmt::format("DELETE FROM {} WHERE transform_id = $1", jobs),
            {std::to_string(transform_id)});
  // Two callers at once: the unique index lets one insert; the other reads it.
  auto inserted = conn.exec(
      fmt::format("INSERT INTO {} (transform_id, version, mode, await_timeout_ms) VALUES ($1, $2, "
                  "$3, $4) ON CONFLICT (transform_id) WHERE state IN ('queued', 'running') DO "
                  "NOTHING RETURNING id",
                  jobs),
      {std::to_string(transform_id), std::to_string(version), mode,
       std::to_string(await_timeout_ms)});
  if (inserted.rows() == 0) {
    txn.commit();
    return enqueue(conn, transform_id, version, mode, await_timeout_ms);
  }
  txn.commit();
  return inserted.get_int(0, 0);
}

std::optional<SelfCheckJobRow> SelfCheckJobs::read(pg::Connection& conn, int64_t id) {
  auto r = conn.exec(select_sql("WHERE j.id = $1"), {std::to_string(id)});
  if (r.rows() == 0) return std::nullopt;
  return row_of(r, 0);
}

std::optional<SelfCheckJobRow> SelfCheckJobs::claim(pg::Connection& conn) {
  std::string jobs = base::ident(schema_) + ".self_check_jobs";
  auto r = conn.exec(fmt::format(
      "UPDATE {0} SET state = 'running', owner_pid = pg_backend_pid(), owner_start = (SELECT "
      "backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()), started_at = "
      "coalesce(started_at, now()) WHERE id = (SELECT id FROM {0} c WHERE c.state = 'queued' OR "
      "(c.state = 'running' AND (c.owner_pid = pg_backend_pid() OR {1})) ORDER BY c.id LIMIT 1 "
      "FOR UPDATE SKIP LOCKED) RETURNING id",
      jobs, owner_gone("c.owner_pid", "c.owner_start")));
  if (r.rows() == 0) return std::nullopt;
  return read(conn, r.get_int(0, 0));
}

bool SelfCheckJobs::save(pg::Connection& conn, const SelfCheckJobRow& j) {
  std::string finished = j.state == "queued" || j.state == "running" ? "NULL" : "now()";
  auto r = conn.exec(
      fmt::format(
          "UPDATE {}.self_check_jobs SET state = $2, step = $3, page_lo = $4::text[], page_hi = "
          "$5::text[], awaiting = $6::bigint, await_until = CASE WHEN $7::int > 0 THEN "
          "clock_timestamp() + $7::int * interval '1 millisecond' ELSE await_until END, pending "
          "= $8::jsonb, rows_compared = $9, divergences = $10::jsonb, truncated = $11, outcome = "
          "$12, status = $13, detail = $14, checked_through = $15::bigint, error = $16, "
          "finished_at = {} WHERE id = $1 AND owner_pid = pg_backend_pid() RETURNING 1",
          base::ident(schema_), finished),
      {std::to_string(j.id), j.state, j.step, j.page_lo, j.page_hi, opt_int(j.awaiting),
       std::to_string(j.await_ms_left),
       j.pending.is_null() ? std::optional<std::string>() : j.pending.dump(),
       std::to_string(j.rows_compared), j.divergences.dump(), j.truncated ? "true" : "false",
       j.outcome, j.status, j.detail, opt_int(j.checked_through), j.error});
  return r.rows() > 0;
}

}  // namespace trellis::catalog
