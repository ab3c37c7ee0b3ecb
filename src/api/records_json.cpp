// Renders the facade's records as JSON (see records_json.hpp).
#include "api/records_json.hpp"

namespace trellis::api {

namespace {

ojson text_or_null(const std::string& text) {
  return text.empty() ? ojson(nullptr) : ojson(text);
}

ojson capture_failure_json(const std::optional<CaptureFailure>& f) {
  if (!f) return nullptr;
  return {{"kind", text_or_null(f->kind)},
          {"table", text_or_null(f->table)},
          {"columns", f->columns},
          {"error", text_or_null(f->error)},
          {"detected_at", text_or_null(f->detected_at)}};
}

}  // namespace

ojson status_json(const Status& s) {
  ojson j;
  j["target"] = s.target;
  j["status"] = s.status;
  j["backfill_failure"] = nullptr;
  if (const auto& f = s.backfill_failure)
    j["backfill_failure"] = {{"chunk", text_or_null(f->chunk)},
                             {"attempts", f->attempts},
                             {"error", text_or_null(f->error)},
                             {"next_retry_at", text_or_null(f->next_retry_at)}};
  j["capture_wait"] = nullptr;
  if (const auto& w = s.capture_wait)
    j["capture_wait"] = {{"table", text_or_null(w->table)},
                         {"lock_mode", text_or_null(w->lock_mode)},
                         {"blocking_pids", w->blocking_pids},
                         {"since", text_or_null(w->since)}};
  j["capture_failure"] = capture_failure_json(s.capture_failure);
  j["held_keys"] = nullptr;
  if (const auto& h = s.held_keys; h && h->count > 0)
    j["held_keys"] = {{"count", h->count}, {"oldest", text_or_null(h->oldest)}};
  j["drain_failure"] = nullptr;
  if (const auto& f = s.drain_failure)
    j["drain_failure"] = {{"table", text_or_null(f->table)},
                          {"error", text_or_null(f->error)},
                          {"sqlstate", text_or_null(f->sqlstate)},
                          {"since", text_or_null(f->since)},
                          {"attempts", f->attempts}};
  j["source_index_gaps"] = ojson::array();
  for (const auto& g : s.source_index_gaps)
    j["source_index_gaps"].push_back({{"role", g.role},
                                      {"table", g.table},
                                      {"columns", g.columns},
                                      {"create_index", g.create_index}});
  j["correcting"] = ojson::array();
  for (const auto& c : s.correcting)
    j["correcting"].push_back({{"partition", c.partition},
                               {"reason", text_or_null(c.reason)},
                               {"since", text_or_null(c.since)}});
  j["paused_upstream_columns"] = s.paused_upstream_columns;
  j["paused_columns"] = ojson::array();
  for (const auto& c : s.paused_columns)
    j["paused_columns"].push_back({{"column", c.column},
                                   {"cause", c.cause},
                                   {"since", text_or_null(c.since)},
                                   {"error", text_or_null(c.error)},
                                   {"sqlstate", text_or_null(c.sqlstate)}});
  j["upstream_waits"] = ojson::array();
  for (const auto& w : s.upstream_waits)
    j["upstream_waits"].push_back({{"transform", w.transform}, {"status", w.status}});
  j["build_rows_done"] = s.build_rows_done;
  j["build_rows_estimate"] = s.build_rows_estimate;
  return j;
}

ojson applied_json(const Applied& a) {
  return {{"kind", a.kind},       {"target", a.target},   {"status", a.status}, {"added", a.added},
          {"dropped", a.dropped}, {"altered", a.altered}, {"note", a.note}};
}

ojson definition_json(const Definition& d) {
  return {{"target", d.target},
          {"statement", d.statement},
          {"shape", d.shape},
          {"sources", d.sources},
          {"status", d.status},
          {"halt", capture_failure_json(d.halt)},
          {"paused_columns", d.paused_columns}};
}

ojson relationship_json(const Relationship& r) {
  return {{"name", r.name},
          {"from_table", r.from_table},
          {"from_column", r.from_column},
          {"to_table", r.to_table},
          {"to_column", r.to_column},
          {"cardinality", r.cardinality},
          {"created_at", r.created_at}};
}

ojson quarantine_page_json(const QuarantinePage& page) {
  ojson keys = ojson::array();
  for (const auto& k : page.keys)
    keys.push_back({{"table", k.table},
                    {"key", k.key},
                    {"charges", k.charges},
                    {"error", k.error},
                    {"sqlstate", text_or_null(k.sqlstate)},
                    {"held_at", k.held_at}});
  return {{"keys", keys}, {"cursor", page.cursor}};
}

ojson test_reset_json(const TestResetReport& r) {
  return {{"disrupted", r.disrupted},
          {"resumed", r.resumed},
          {"rebuilt", r.rebuilt},
          {"left_paused", r.left_paused},
          {"seconds", r.seconds}};
}

ojson divergence_json(const Divergence& d) {
  ojson j = {{"kind", d.kind}};
  if (!d.key.empty()) j["key"] = nlohmann::json::parse(d.key);
  if (!d.column.empty()) j["column"] = d.column;
  if (d.kind == "cell") {
    j["persisted"] = d.persisted ? ojson(*d.persisted) : ojson();
    j["recomputed"] = d.recomputed ? ojson(*d.recomputed) : ojson();
  }
  if (!d.table.empty()) j["table"] = d.table;
  if (!d.detail.empty()) j["detail"] = d.detail;
  return j;
}

ojson self_check_job_json(const SelfCheckJob& job) {
  ojson j = {{"id", job.id},       {"target", job.target}, {"mode", job.mode},
             {"state", job.state}, {"error", nullptr},     {"outcome", nullptr},
             {"status", nullptr},  {"detail", nullptr},    {"rows_compared", job.rows_compared}};
  if (!job.error.empty()) j["error"] = job.error;
  if (job.report) {
    const auto& r = *job.report;
    j["outcome"] = r.outcome;
    if (!r.status.empty()) j["status"] = r.status;
    if (!r.detail.empty()) j["detail"] = r.detail;
    j["truncated"] = r.truncated;
    j["checked_through"] = r.checked_through ? ojson(r.checked_through->segment) : ojson();
    j["divergences"] = ojson::array();
    for (const auto& d : r.divergences) j["divergences"].push_back(divergence_json(d));
  }
  j["created_at"] = text_or_null(job.created_at);
  j["started_at"] = text_or_null(job.started_at);
  j["finished_at"] = text_or_null(job.finished_at);
  return j;
}

}  // namespace trellis::api
