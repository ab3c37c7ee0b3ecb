// Status records (SPEC §3) read from the catalog, so every process reports
// the same thing whichever one runs the workers.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "api/instance.hpp"

namespace trellis::api {

namespace {

std::optional<nlohmann::json> json_field(const pg::Result& r, int row, int col) {
  auto text = r.get_opt(row, col);
  if (!text) return std::nullopt;
  return nlohmann::json::parse(*text);
}

std::string str(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

Status status_from_row(const pg::Result& r, int i) {
  Status s;
  s.target = r.get(i, 0);
  s.status = r.get(i, 1);
  if (auto j = json_field(r, i, 2)) {
    CaptureWait w{str(*j, "table"), str(*j, "lock_mode"), {}, str(*j, "since")};
    for (const auto& p : (*j)["blocking_pids"]) w.blocking_pids.push_back(p.get<int>());
    s.capture_wait = w;
  }
  if (auto j = json_field(r, i, 3))
    s.capture_failure = CaptureFailure{
        str(*j, "kind"), str(*j, "table"), {}, str(*j, "error"), str(*j, "detected_at")};
  if (auto j = json_field(r, i, 4))
    s.backfill_failure = BackfillFailure{str(*j, "chunk"), j->value("attempts", 1),
                                         str(*j, "error"), str(*j, "next_retry_at")};
  if (auto j = json_field(r, i, 5))
    s.drain_failure = DrainFailure{str(*j, "table"), str(*j, "error"), str(*j, "sqlstate"),
                                   str(*j, "since"), j->value("attempts", 1)};
  s.build_rows_done = r.get_int(i, 6);
  s.build_rows_estimate = r.get_int(i, 7);
  return s;
}

}  // namespace

std::vector<Status> read_status(Trellis::Impl& impl, const std::optional<std::string>& target) {
  auto conn = impl.pool.acquire();
  std::string where = "true";
  std::vector<pg::Param> params;
  if (target) {
    auto [schema, table] = split_target(impl, *target);
    where = "target_schema = $1 AND target_table = $2";
    params = {schema, table};
  }
  auto r = conn->exec(
      fmt::format("SELECT target_schema || '.' || target_table, status, capture_wait::text, "
                  "capture_failure::text, backfill_failure::text, drain_failure::text, "
                  "build_rows_done, build_rows_estimate FROM {} WHERE {} ORDER BY id",
                  impl.store.table("transforms"), where),
      params);
  std::vector<Status> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(status_from_row(r, i));
  return out;
}

}  // namespace trellis::api
