// Status records (docs/architecture.md, Lifecycle) read from the catalog, so every process reports
// the same thing whichever one runs the workers.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "api/instance.hpp"
#include "base/sql_text.hpp"
#include "bind/joins.hpp"
#include "bind/table_description.hpp"
#include "bind/validate.hpp"
#include "catalog/report.hpp"
#include "catalog/states.hpp"
#include "pg/lock_timeout.hpp"

namespace trellis {

namespace {

constexpr std::pair<Lifecycle, std::string_view> kWords[] = {
    {Lifecycle::waiting_to_backfill, "waiting_to_backfill"},
    {Lifecycle::backfilling, "backfilling"},
    {Lifecycle::catching_up, "catching_up"},
    {Lifecycle::live, "live"},
    {Lifecycle::paused, "paused"},
    {Lifecycle::quarantined, "quarantined"}};

}  // namespace

std::string word(Lifecycle lifecycle) {
  for (const auto& [l, w] : kWords)
    if (l == lifecycle) return std::string(w);
  return "";
}

std::optional<Lifecycle> lifecycle_named(std::string_view word) {
  for (const auto& [l, w] : kWords)
    if (w == word) return l;
  return std::nullopt;
}

bool Status::is(Lifecycle lifecycle) const {
  return lifecycle_named(status) == lifecycle;
}

bool CaptureFailure::is(CaptureFailureKind k) const {
  catalog::FailureKind mine = k == CaptureFailureKind::capture ? catalog::FailureKind::capture
                              : k == CaptureFailureKind::halt  ? catalog::FailureKind::halt
                                                               : catalog::FailureKind::disruption;
  return kind == catalog::name(mine);
}

}  // namespace trellis

namespace trellis::api {

namespace {

std::string str(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

Status status_from(const catalog::TransformReport& rep) {
  Status s;
  s.target = rep.target;
  s.status = catalog::name(rep.def.status);
  if (const auto& j = rep.capture_wait) {
    CaptureWait w{str(*j, "table"), str(*j, "lock_mode"), {}, str(*j, "since")};
    for (const auto& p : j->value("blocking_pids", nlohmann::json::array()))
      w.blocking_pids.push_back(p.get<int>());
    s.capture_wait = w;
  }
  if (const auto& j = rep.capture_failure) {
    s.capture_failure = CaptureFailure{
        str(*j, "kind"), str(*j, "table"), {}, str(*j, "error"), str(*j, "detected_at")};
    for (const auto& c : j->value("columns", nlohmann::json::array()))
      s.capture_failure->columns.push_back(c.get<std::string>());
  }
  if (const auto& j = rep.backfill_failure)
    s.backfill_failure = BackfillFailure{str(*j, "chunk"), j->value("attempts", 1),
                                         str(*j, "error"), str(*j, "next_retry_at")};
  if (const auto& j = rep.drain_failure)
    s.drain_failure = DrainFailure{str(*j, "table"), str(*j, "error"), str(*j, "sqlstate"),
                                   str(*j, "since"), j->value("attempts", 1)};
  s.build_rows_done = rep.build_rows_done;
  s.build_rows_estimate = rep.build_rows_estimate;
  if (rep.held_keys > 0) s.held_keys = HeldKeys{rep.held_keys, rep.oldest_held};
  s.paused_upstream_columns = rep.paused_upstream_columns;
  for (const auto& [column, j] : rep.paused_columns.items())
    s.paused_columns.push_back(
        {column, str(j, "reason"), str(j, "since"), str(j, "error"), str(j, "sqlstate")});
  // Resumed together with an upstream that is not live: the build waits for it.
  for (const auto& w : rep.upstream_waits)
    s.upstream_waits.push_back({w.target, std::string(catalog::name(w.status))});
  // Built and applying, but over upstream values that are frozen.
  if (rep.def.status == catalog::Status::live && !s.paused_upstream_columns.empty())
    s.status = word(Lifecycle::catching_up);
  // A partition event is being corrected for: the target is not yet what
  // its sources say, as while it builds.
  for (const auto& c : rep.correcting) s.correcting.push_back({c.partition, c.reason, c.since});
  if (!s.correcting.empty()) s.status = word(Lifecycle::backfilling);
  return s;
}

// A GROUP BY target's source needs an index leading with the group's
// items; a missing one (dropped since define, or opted out of) is reported.
std::optional<SourceIndexGap> group_index_gap(pg::Connection& conn,
                                              const catalog::TransformDef& def) {
  if (def.shape != catalog::Shape::aggregate || def.group.empty()) return std::nullopt;
  auto table = bind::describe_table(conn, def.source_schema, def.source_table);
  if (!table) return std::nullopt;
  if (!def.group_exprs.empty()) {
    // Its key texts lock the indexes: a session holding the table
    // exclusively leaves the gap unreported for now rather than status
    // waiting for it.
    if (!pg::try_under_lock_timeout(conn, [&] { bind::describe_index_keys(conn, *table); }))
      return std::nullopt;
  }
  if (bind::has_group_index(*table, def)) return std::nullopt;
  return SourceIndexGap{"group_by", def.source_name(), bind::group_index_keys(def),
                        bind::group_index_suggestion(def)};
}

// A join needs an index on the columns its joined table's key is equated
// with, on each table before it that it reads (bind::join_index_needs); a
// missing one is reported with role join:<alias>.
std::vector<SourceIndexGap> join_index_gaps(pg::Connection& conn,
                                            const catalog::TransformDef& def) {
  std::vector<SourceIndexGap> out;
  for (const auto& need : bind::join_index_needs(def)) {
    auto table = bind::describe_table(conn, need.schema, need.table);
    if (!table || table->has_index_leading_with(need.columns)) continue;
    out.push_back({need.role, need.schema + "." + need.table, need.columns,
                   bind::join_index_suggestion(need)});
  }
  return out;
}

std::vector<SourceIndexGap> index_gaps(pg::Connection& conn, const catalog::TransformDef& def) {
  auto out = join_index_gaps(conn, def);
  if (auto gap = group_index_gap(conn, def)) out.insert(out.begin(), *gap);
  return out;
}

}  // namespace

std::vector<Status> read_status(Trellis::Impl& impl, const std::optional<std::string>& target) {
  auto conn = impl.pool.acquire();
  std::optional<std::pair<std::string, std::string>> named;
  if (target) named = split_target(impl, *target);
  std::vector<Status> out;
  for (const auto& rep : catalog::read_reports(*conn, impl.store, named)) {
    out.push_back(status_from(rep));
    out.back().source_index_gaps = index_gaps(*conn, rep.def);
  }
  return out;
}

}  // namespace trellis::api
