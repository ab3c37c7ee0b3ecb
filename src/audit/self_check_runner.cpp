// Self-check steps; see self_check_runner.hpp.
#include "audit/self_check_runner.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "base/event_log.hpp"
#include "bind/table_description.hpp"
#include "capture/capture_audit.hpp"
#include "compile/self_check_sql.hpp"
#include "pg/sql_error.hpp"
#include "ring/convergence.hpp"

namespace trellis::audit {

namespace {

void finish(catalog::SelfCheckJobRow& job, const std::string& outcome,
            std::optional<std::string> detail = std::nullopt) {
  job.state = "done";
  job.outcome = outcome;
  job.detail = std::move(detail);
  job.pending = nullptr;
}

void end_with(catalog::SelfCheckJobRow& job, const std::string& state, const std::string& error) {
  job.state = state;
  job.error = error;
  job.pending = nullptr;
}

// Adds `found` to the job's divergences, at most kMaxDivergences in all;
// past that the job is done, diverged and truncated. Returns false then.
bool record(catalog::SelfCheckJobRow& job, const nlohmann::json& found) {
  for (const auto& d : found) {
    if (job.divergences.size() >= static_cast<size_t>(kMaxDivergences)) {
      job.truncated = true;
      finish(job, "diverged");
      return false;
    }
    job.divergences.push_back(d);
  }
  return true;
}

bool audited_any(const catalog::SelfCheckJobRow& job) {
  return job.page_lo.has_value() || job.rows_compared > 0;
}

// A difference as a whole: its kind, key, column, values and the target
// row's version (xmin). A re-check keeps only differences found identical.
// A row that only lagged behind its source differs otherwise by then: the
// wait covered the change it lagged behind, so a drain rewrote it (a new
// xmin) or it no longer differs. A row that really diverged stays as it
// is, identical at every check, unless a change of its source row
// re-derives it, which repairs it. Under writes that keep changing the
// same rows, a lagging row may still look alike twice by chance (an
// aggregate's count going back and forth, a write the drain found had no
// net effect), so standard mode checks kRounds times.
std::string identity(const nlohmann::json& d) {
  return d.dump();
}

// The differences of `found` also in `before` (both with their xmin).
nlohmann::json found_again(const nlohmann::json& before, const nlohmann::json& found) {
  std::set<std::string> seen;
  for (const auto& d : before) seen.insert(identity(d));
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& d : found)
    if (seen.count(identity(d))) kept.push_back(d);
  return kept;
}

// As reported: without the row version.
nlohmann::json reported(nlohmann::json found) {
  for (auto& d : found) d.erase("xmin");
  return found;
}

// The self-check SQL for the columns the target has now (`present`: none
// when the target table is gone).
compile::SelfCheckSql target_sql(pg::Connection& conn, const catalog::TransformDef& def,
                                 std::set<std::string>& present) {
  auto info = bind::describe_table(conn, def.target_schema, def.target_table);
  if (info)
    for (const auto& c : info->columns) present.insert(c.column.name);
  return compile::compile_self_check(def, present);
}

}  // namespace

SelfCheckRunner::SelfCheckRunner(catalog::Store& store, int page_rows)
    : store_(store), jobs_(store.schema()), page_rows_(std::max(1, page_rows)) {}

bool SelfCheckRunner::step_one(pg::Connection& conn) {
  auto job = jobs_.claim(conn);
  if (!job) return false;
  bool moved = false;
  try {
    moved = run_step(conn, *job);
  } catch (const pg::SqlError& e) {
    if (!conn.healthy()) throw;
    if (e.failure_class() == pg::FailureClass::transient && ++retries_[job->id] < kRetries) {
      spdlog::debug("self-check of {} (job {}): {}; it is retried", job->target, job->id, e.what());
      return false;
    }
    end_with(
        *job, "failed",
        fmt::format("{} (SQLSTATE {}) while auditing {}", e.what(), e.sqlstate(), job->target));
    moved = true;
  }
  retries_.erase(job->id);
  if (!jobs_.save(conn, *job)) return false;  // taken over meanwhile
  if (job->state != "running" && job->state != "queued")
    base::log_event(spdlog::level::info, "self_check_finished", job->target,
                    {{"job", job->id},
                     {"state", job->state},
                     {"outcome", job->outcome.value_or("")},
                     {"rows_compared", job->rows_compared},
                     {"divergences", job->divergences.size()}},
                    fmt::format("self-check of {} {}: {}", job->target, job->state,
                                job->outcome.value_or(job->error.value_or(""))));
  return moved;
}

bool SelfCheckRunner::run_step(pg::Connection& conn, catalog::SelfCheckJobRow& job) {
  job.await_ms_left = 0;
  if (job.step == "start") return start(conn, job);
  if (job.step == "await" || job.step == "recheck_await") return await(conn, job);
  return compare(conn, job, job.step == "recheck");
}

std::optional<catalog::TransformDef> SelfCheckRunner::still_auditable(
    pg::Connection& conn, catalog::SelfCheckJobRow& job) {
  auto def = store_.transform_by_id(conn, job.transform_id);
  if (!def) {
    end_with(job, "cancelled", "the transform was dropped");
    return std::nullopt;
  }
  if (def->version != job.version) {
    end_with(job, "cancelled",
             fmt::format("transform {} changed (version {} to {}) while it was audited; run the "
                         "self-check again",
                         def->target_name(), job.version, def->version));
    return std::nullopt;
  }
  // Capture is installed for running transforms only: a paused one has
  // none to audit.
  bool running =
      def->status == catalog::Status::live || def->status == catalog::Status::backfilling;
  auto faults = running ? capture::audit_capture(conn, store_, {store_.schema()}, *def)
                        : std::vector<capture::CaptureFault>{};
  if (!faults.empty()) {
    nlohmann::json found = nlohmann::json::array();
    for (const auto& f : faults)
      found.push_back({{"kind", "capture"}, {"table", f.table}, {"detail", f.detail}});
    job.truncated = audited_any(job);
    if (record(job, found)) finish(job, "diverged");
    return std::nullopt;
  }
  if (def->status != catalog::Status::live) {
    job.status = std::string(catalog::name(def->status));
    job.truncated = audited_any(job);
    finish(job, "not_live",
           fmt::format("transform {} is {}; a self-check compares a live target only",
                       def->target_name(), *job.status));
    return std::nullopt;
  }
  if (int64_t held = store_.held_key_count(conn, def->id); held > 0) {
    job.truncated = audited_any(job);
    finish(job, "not_caught_up",
           fmt::format("transform {} holds {} source key(s) in quarantine; their rows are stale "
                       "until released (trellis quarantine list {}) or the transform is resumed",
                       def->target_name(), held, def->target_name()));
    return std::nullopt;
  }
  return def;
}

void SelfCheckRunner::await_token(pg::Connection& conn, catalog::SelfCheckJobRow& job,
                                  const std::string& step) {
  job.awaiting = ring::token_segment(conn, store_);
  job.checked_through = job.awaiting;
  job.await_ms_left = std::max(1, job.await_timeout_ms);
  job.step = step;
}

bool SelfCheckRunner::start(pg::Connection& conn, catalog::SelfCheckJobRow& job) {
  auto def = still_auditable(conn, job);
  if (!def) return true;
  // The target's columns against the definition's.
  std::set<std::string> present;
  auto sql = target_sql(conn, *def, present);
  nlohmann::json found = nlohmann::json::array();
  bool key_missing = present.empty();
  for (const auto& c : sql.expected_columns) {
    if (present.count(c)) continue;
    found.push_back({{"kind", "missing_column"}, {"column", c}});
    if (std::find(sql.key_columns.begin(), sql.key_columns.end(), c) != sql.key_columns.end())
      key_missing = true;
  }
  std::set<std::string> expected(sql.expected_columns.begin(), sql.expected_columns.end());
  for (const auto& c : present)
    if (!expected.count(c)) found.push_back({{"kind", "extra_column"}, {"column", c}});
  if (!record(job, found)) return true;
  if (key_missing) {
    finish(job, "diverged");  // no row can be matched without its key
    return true;
  }
  await_token(conn, job, "await");
  return true;
}

bool SelfCheckRunner::await(pg::Connection& conn, catalog::SelfCheckJobRow& job) {
  if (job.await_expired) {
    job.truncated = audited_any(job);
    finish(job, "not_caught_up",
           fmt::format("changes committed before the audit did not reach {} within {} ms (a "
                       "backlog, a drain failure, or keys held in quarantine); try again with a "
                       "longer timeout",
                       job.target, job.await_timeout_ms));
    return true;
  }
  if (!ring::drained_through(conn, store_, *job.awaiting)) return false;
  // Then the segments the drains' writes to captured targets staged into.
  int64_t next = ring::downstream_reach(conn, store_, *job.awaiting);
  if (next > *job.awaiting) {
    job.awaiting = next;
    return true;
  }
  job.step = job.step == "await" ? "compare" : "recheck";
  return true;
}

bool SelfCheckRunner::compare(pg::Connection& conn, catalog::SelfCheckJobRow& job, bool recheck) {
  auto def = still_auditable(conn, job);
  if (!def) return true;
  std::set<std::string> present;
  auto sql = target_sql(conn, *def, present);
  size_t room = static_cast<size_t>(kMaxDivergences) - job.divergences.size() + 1;
  pg::Transaction txn(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY");
  std::optional<std::string> hi = job.page_hi;
  if (!recheck) {
    auto bound = conn.exec(sql.page_bound, {job.page_lo, std::to_string(page_rows_)});
    hi = bound.rows() ? bound.get_opt(0, 0) : std::nullopt;
  }
  auto result = conn.exec(sql.compare, {job.page_lo, hi, std::to_string(room)});
  txn.commit();
  nlohmann::json found = nlohmann::json::array();
  for (int i = 1; i < result.rows(); ++i) {
    nlohmann::json d = {
        {"kind", result.get(i, 0)},
        {"key", nlohmann::json::parse(result.get(i, 1))},
        {"xmin", result.get_opt(i, 6) ? nlohmann::json(result.get(i, 6)) : nullptr}};
    if (auto column = result.get_opt(i, 2)) {
      d["column"] = *column;
      d["persisted"] = result.get_opt(i, 3) ? nlohmann::json(*result.get_opt(i, 3)) : nullptr;
      d["recomputed"] = result.get_opt(i, 4) ? nlohmann::json(*result.get_opt(i, 4)) : nullptr;
    }
    found.push_back(std::move(d));
  }
  if (!recheck) {
    job.rows_compared += result.get_int(0, 5);
    if (!found.empty() && job.mode == "standard") {
      // Perhaps changes still on their way: compare again once the drains
      // are through a fresh token.
      job.pending = {{"round", 1}, {"found", found}};
      job.page_hi = hi;
      await_token(conn, job, "recheck_await");
      return true;
    }
  } else {
    found = found_again(job.pending["found"], found);
    int round = job.pending.value("round", 1) + 1;
    if (!found.empty() && round < kRounds) {
      job.pending = {{"round", round}, {"found", found}};
      await_token(conn, job, "recheck_await");
      return true;
    }
    job.pending = nullptr;
  }
  found = reported(std::move(found));
  if (!record(job, found)) return true;
  if (!hi) {
    finish(job, job.divergences.empty() ? "converged" : "diverged");
    return true;
  }
  job.page_lo = hi;
  job.page_hi.reset();
  job.step = "compare";
  return true;
}

}  // namespace trellis::audit
