// Status reports read from the catalog in one statement (report.hpp), so
// every process reports the same thing whichever one runs the workers.
#include "catalog/report.hpp"

#include <fmt/format.h>

#include <map>

#include "catalog/range_claims.hpp"
#include "catalog/transitions.hpp"
#include "trellis/error.hpp"

namespace trellis::catalog {

namespace {

// The statement's columns by name.
class Row {
 public:
  Row(const pg::Result& r, int row, const std::map<std::string, int>& at)
      : r_(r), row_(row), at_(at) {}
  std::string text(const std::string& column) const { return r_.get(row_, index(column)); }
  int64_t number(const std::string& column) const { return r_.get_int(row_, index(column)); }
  std::optional<nlohmann::json> json_opt(const std::string& column) const {
    auto text = r_.get_opt(row_, index(column));
    if (!text) return std::nullopt;
    return nlohmann::json::parse(*text);
  }
  nlohmann::json json(const std::string& column) const {
    return nlohmann::json::parse(r_.get(row_, index(column)));
  }

 private:
  int index(const std::string& column) const {
    auto it = at_.find(column);
    if (it == at_.end()) throw Error(ErrorCode::internal, "status read has no column " + column);
    return it->second;
  }
  const pg::Result& r_;
  int row_;
  const std::map<std::string, int>& at_;
};

TransformReport report_from(const Row& row) {
  TransformReport rep;
  rep.target = row.text("target");
  rep.def = transform_from_json(row.json("definition"));
  rep.def.status = status_named(row.text("status"));
  rep.capture_wait = row.json_opt("capture_wait");
  rep.capture_failure = row.json_opt("capture_failure");
  rep.backfill_failure = row.json_opt("backfill_failure");
  rep.drain_failure = row.json_opt("drain_failure");
  rep.build_rows_done = row.number("build_rows_done");
  rep.build_rows_estimate = row.number("build_rows_estimate");
  rep.held_keys = row.number("held_keys");
  rep.oldest_held = row.text("oldest_held");
  rep.paused_upstream_columns = row.json("paused_upstream_columns").get<std::vector<std::string>>();
  rep.paused_columns = row.json("paused_columns");
  for (const auto& w : row.json("upstream_waits"))
    rep.upstream_waits.push_back(
        {w.at("transform").get<std::string>(), status_named(w.at("status").get<std::string>())});
  for (const auto& c : row.json("correcting"))
    rep.correcting.push_back({c.at("partition").get<std::string>(),
                              c.at("reason").get<std::string>(), c.at("since").get<std::string>()});
  return rep;
}

}  // namespace

std::vector<TransformReport> read_reports(
    pg::Connection& conn, const Store& store,
    const std::optional<std::pair<std::string, std::string>>& target) {
  std::string where = "true";
  std::vector<pg::Param> params;
  if (target) {
    where = "target_schema = $1 AND target_table = $2";
    params = {target->first, target->second};
  }
  auto r = conn.exec(
      fmt::format(
          "SELECT target_schema || '.' || target_table AS target, status, capture_wait::text AS "
          "capture_wait, capture_failure::text AS capture_failure, backfill_failure::text AS "
          "backfill_failure, drain_failure::text AS drain_failure, build_rows_done + {6} AS "
          "build_rows_done, "
          "build_rows_estimate, definition::text AS definition, (SELECT count(*) FROM {1} h "
          "WHERE h.transform_id = t.id AND h.held) AS held_keys, (SELECT min(held_at)::text FROM "
          "{1} h WHERE h.transform_id = t.id AND h.held) AS oldest_held, (SELECT "
          "coalesce(jsonb_agg(u.target_schema || '.' || u.target_table || '.' || k ORDER BY "
          "u.id, k), '[]')::text FROM {0} u JOIN {3} c ON c.table_schema = u.target_schema AND "
          "c.table_name = u.target_table CROSS JOIN jsonb_object_keys(u.paused_columns) k WHERE "
          "c.id = t.source_table_id AND k IN (SELECT r ->> 'name' FROM "
          "jsonb_array_elements(t.definition -> 'reads') r)) AS paused_upstream_columns, "
          "t.paused_columns::text AS paused_columns, CASE WHEN t.status = {5} "
          "THEN (SELECT coalesce(jsonb_agg(jsonb_build_object('transform', w.target, 'status', "
          "w.status) ORDER BY w.id), '[]')::text FROM ({4}) w) ELSE '[]' END AS upstream_waits, "
          "CASE WHEN t.status IN ({8}, {9}) THEN (SELECT coalesce(jsonb_agg(jsonb_build_object("
          "'partition', pc.node_name, 'reason', pc.reason, 'since', pc.since::text) ORDER BY "
          "pc.since, pc.id), '[]')::text FROM {7} pc WHERE pc.table_id = ANY({10})) ELSE '[]' "
          "END AS correcting FROM {0} t WHERE {2} ORDER BY id",
          store.table("transforms"), store.table("held_keys"), where,
          store.table("captured_tables"), store.non_live_upstreams("t"),
          literal(Status::waiting_to_backfill),
          rows_done_by_claims(store.table("range_claims"), "t.id", "t.build_fence"),
          store.table("partition_corrections"), literal(Status::backfilling), literal(Status::live),
          read_table_ids("t")),
      params);
  std::map<std::string, int> at;
  for (int c = 0; c < r.columns(); ++c) at[r.column_name(c)] = c;
  std::vector<TransformReport> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(report_from(Row(r, i, at)));
  return out;
}

}  // namespace trellis::catalog
