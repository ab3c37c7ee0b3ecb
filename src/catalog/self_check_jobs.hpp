// Self-check jobs as the catalog keeps them (migration 0011): queued by the
// API, claimed and stepped by drain threads (audit/self_check_runner), read
// back by the API. A job is claimed by a backend (catalog/claims); every
// save is conditional on still owning it, so a job a stalled backend lost
// to a takeover is never written by both.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pg/connection.hpp"

namespace trellis::catalog {

struct SelfCheckJobRow {
  int64_t id = 0;
  int transform_id = 0;
  std::string target;  // schema.table
  int version = 0;
  std::string mode;  // standard | strict
  int await_timeout_ms = 0;
  std::string state;                            // queued | running | done | failed | cancelled
  std::string step;                             // start | await | compare | recheck_await | recheck
  std::optional<std::string> page_lo, page_hi;  // encoded page keys (text[] literals)
  std::optional<int64_t> awaiting;
  bool await_expired = false;  // read: await_until has passed
  int await_ms_left = 0;       // written: sets await_until this far from now (when > 0)
  nlohmann::json pending;      // null, or the differences a re-check confirms
  int64_t rows_compared = 0;
  nlohmann::json divergences = nlohmann::json::array();
  bool truncated = false;
  std::optional<std::string> outcome, status, detail, error;
  std::optional<int64_t> checked_through;
  std::string created_at;
  std::optional<std::string> started_at, finished_at;
};

class SelfCheckJobs {
 public:
  explicit SelfCheckJobs(std::string schema) : schema_(std::move(schema)) {}
  // Queues an audit of transform `transform_id` (at `version`) unless one is
  // unfinished, and drops its earlier finished ones; returns the unfinished
  // job's id either way.
  int64_t enqueue(pg::Connection& conn, int transform_id, int version, const std::string& mode,
                  int await_timeout_ms);
  std::optional<SelfCheckJobRow> read(pg::Connection& conn, int64_t id);
  // Claims the oldest job that is queued, or running under this backend or
  // under one that is gone, and marks it running under this backend.
  std::optional<SelfCheckJobRow> claim(pg::Connection& conn);
  // Saves everything a step may change; false when this backend no longer
  // owns the job (it was taken over).
  bool save(pg::Connection& conn, const SelfCheckJobRow& job);

 private:
  std::string select_sql(const std::string& where) const;
  std::string schema_;
};

}  // namespace trellis::catalog
