// Status records (SPEC §3) read from the catalog, so every process reports
// the same thing whichever one runs the workers.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "api/instance.hpp"
#include "base/sql_text.hpp"
#include "lang/introspect.hpp"

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
  if (auto j = json_field(r, i, 3)) {
    s.capture_failure = CaptureFailure{
        str(*j, "kind"), str(*j, "table"), {}, str(*j, "error"), str(*j, "detected_at")};
    for (const auto& c : j->value("columns", nlohmann::json::array()))
      s.capture_failure->columns.push_back(c.get<std::string>());
  }
  if (auto j = json_field(r, i, 4))
    s.backfill_failure = BackfillFailure{str(*j, "chunk"), j->value("attempts", 1),
                                         str(*j, "error"), str(*j, "next_retry_at")};
  if (auto j = json_field(r, i, 5))
    s.drain_failure = DrainFailure{str(*j, "table"), str(*j, "error"), str(*j, "sqlstate"),
                                   str(*j, "since"), j->value("attempts", 1)};
  s.build_rows_done = r.get_int(i, 6);
  s.build_rows_estimate = r.get_int(i, 7);
  if (int64_t held = r.get_int(i, 9); held > 0) s.held_keys = HeldKeys{held, r.get(i, 10)};
  s.paused_upstream_columns = nlohmann::json::parse(r.get(i, 11)).get<std::vector<std::string>>();
  s.paused_columns = nlohmann::json::parse(r.get(i, 12)).get<std::vector<std::string>>();
  // Resumed together with an upstream that is not live: the build waits for it.
  for (const auto& w : nlohmann::json::parse(r.get(i, 13)))
    s.upstream_waits.push_back({str(w, "transform"), str(w, "status")});
  // Built and applying, but over upstream values that are frozen.
  if (s.status == "live" && !s.paused_upstream_columns.empty()) s.status = "catching_up";
  return s;
}

// A GROUP BY target's source needs an index leading with the group columns;
// a missing one (dropped since define, or opted out of) is reported.
std::vector<SourceIndexGap> index_gaps(pg::Connection& conn, const catalog::TransformDef& def) {
  if (def.shape != "aggregate") return {};
  auto table = lang::describe_table(conn, def.source_schema, def.source_table);
  std::vector<std::string> cols;
  for (const auto& g : def.group) cols.push_back(g.name);
  if (!table || lang::has_index_leading_with(conn, *table, cols)) return {};
  std::string list =
      base::join<std::string>(cols, ", ", [](const std::string& c) { return base::ident(c); });
  return {{"group_by", def.source_name(), cols,
           fmt::format("CREATE INDEX ON {} ({})",
                       base::qualified(def.source_schema, def.source_table), list)}};
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
                  "build_rows_done, build_rows_estimate, definition::text, (SELECT count(*) FROM "
                  "{1} h WHERE h.transform_id = t.id AND h.held), (SELECT min(held_at)::text FROM "
                  "{1} h WHERE h.transform_id = t.id AND h.held), (SELECT coalesce(jsonb_agg("
                  "u.target_schema || '.' || u.target_table || '.' || k ORDER BY u.id, k), "
                  "'[]')::text FROM {0} u JOIN {3} c ON c.table_schema = u.target_schema AND "
                  "c.table_name = u.target_table CROSS JOIN jsonb_object_keys(u.paused_columns) k "
                  "WHERE c.id = t.source_table_id AND k IN (SELECT r ->> 'name' FROM "
                  "jsonb_array_elements(t.definition -> 'reads') r)), (SELECT "
                  "coalesce(jsonb_agg(k ORDER BY k), '[]')::text FROM "
                  "jsonb_object_keys(t.paused_columns) k), CASE WHEN t.status = "
                  "'waiting_to_backfill' THEN (SELECT coalesce(jsonb_agg(jsonb_build_object("
                  "'transform', w.target, 'status', w.status) ORDER BY w.id), '[]')::text FROM "
                  "({4}) w) ELSE '[]' END FROM {0} t WHERE {2} ORDER BY id",
                  impl.store.table("transforms"), impl.store.table("held_keys"), where,
                  impl.store.table("captured_tables"), impl.store.non_live_upstreams("t")),
      params);
  std::vector<Status> out;
  for (int i = 0; i < r.rows(); ++i) {
    out.push_back(status_from_row(r, i));
    auto def = catalog::transform_from_json(nlohmann::json::parse(r.get(i, 8)));
    out.back().source_index_gaps = index_gaps(*conn, def);
  }
  return out;
}

}  // namespace trellis::api
