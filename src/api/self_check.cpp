// self_check, self_check_job and await_self_check (README, "Auditing a
// target"): the API queues a job (catalog/self_check_jobs) that drain
// threads run (audit/self_check_runner) and reads it back.
#include <fmt/format.h>

#include <thread>

#include "api/instance.hpp"
#include "catalog/self_check_jobs.hpp"

namespace trellis::api {

namespace {

std::string text_or_empty(const nlohmann::json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::optional<std::string> text_or_null(const nlohmann::json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<std::string>();
}

SelfCheckJob job_from(const catalog::SelfCheckJobRow& row) {
  SelfCheckJob job;
  job.id = row.id;
  job.target = row.target;
  job.mode = row.mode;
  job.state = row.state;
  job.rows_compared = row.rows_compared;
  job.error = row.error.value_or("");
  job.created_at = row.created_at;
  job.started_at = row.started_at.value_or("");
  job.finished_at = row.finished_at.value_or("");
  if (row.state != "done") return job;
  SelfCheckReport report;
  report.target = row.target;
  report.outcome = row.outcome.value_or("");
  report.status = row.status.value_or("");
  report.detail = row.detail.value_or("");
  report.rows_compared = row.rows_compared;
  report.truncated = row.truncated;
  if (row.checked_through && report.outcome != "not_live")
    report.checked_through = Token{*row.checked_through};
  for (const auto& d : row.divergences)
    report.divergences.push_back({text_or_empty(d, "kind"), text_or_empty(d, "key"),
                                  text_or_empty(d, "column"), text_or_null(d, "persisted"),
                                  text_or_null(d, "recomputed"), text_or_empty(d, "table"),
                                  text_or_empty(d, "detail")});
  job.report = std::move(report);
  return job;
}

}  // namespace

SelfCheckJob self_check(Trellis::Impl& impl, const std::string& target,
                        const SelfCheckOptions& options) {
  if (options.mode != "standard" && options.mode != "strict")
    throw Error(ErrorCode::validation,
                fmt::format("self-check mode \"{}\" is not one of standard, strict", options.mode));
  if (options.await_timeout.count() <= 0)
    throw Error(ErrorCode::validation, "a self-check's await timeout must be positive");
  auto conn = impl.pool.acquire();
  auto def = require_transform(impl, *conn, target);
  if (!def.without_source_index) {
    auto status = read_status(impl, def.target_name());
    if (!status.empty() && !status.front().source_index_gaps.empty()) {
      const auto& gap = status.front().source_index_gaps.front();
      throw Error(ErrorCode::validation,
                  fmt::format("a self-check of {} would scan {} once per page: it lacks the index "
                              "on ({}) the definition reads it by; run: {}",
                              def.target_name(), gap.table, fmt::join(gap.columns, ", "),
                              gap.create_index));
    }
  }
  catalog::SelfCheckJobs jobs(impl.store.schema());
  auto timeout_ms = static_cast<int>(std::min<int64_t>(options.await_timeout.count(), INT32_MAX));
  int64_t id = jobs.enqueue(*conn, def.id, def.version, options.mode, timeout_ms);
  auto row = jobs.read(*conn, id);
  if (!row) throw Error(ErrorCode::conflict, "the self-check job was replaced meanwhile; retry");
  return job_from(*row);
}

std::optional<SelfCheckJob> self_check_job(Trellis::Impl& impl, int64_t id) {
  auto conn = impl.pool.acquire();
  auto row = catalog::SelfCheckJobs(impl.store.schema()).read(*conn, id);
  if (!row) return std::nullopt;
  return job_from(*row);
}

SelfCheckJob await_self_check(Trellis::Impl& impl, int64_t id, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto job = self_check_job(impl, id);
    if (!job)
      throw Error(ErrorCode::not_found,
                  fmt::format("self-check job {} is gone: its transform was dropped or a later "
                              "self-check replaced it",
                              id));
    if (job->finished()) return *job;
    if (std::chrono::steady_clock::now() >= deadline)
      throw Error(
          ErrorCode::timeout,
          fmt::format("self-check job {} of {} is still {} after {} ms ({} rows compared "
                      "so far){}",
                      id, job->target, job->state, timeout.count(), job->rows_compared,
                      job->state == "queued" ? "; is a worker with drain threads running?" : ""));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace trellis::api
