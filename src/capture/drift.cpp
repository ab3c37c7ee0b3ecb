// Drift checks; see drift.hpp. Each finding names the table, the columns
// and the fix, and is stored on the readers it pauses.
#include "capture/drift.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "base/event_log.hpp"
#include "base/sql_text.hpp"
#include "bind/table_description.hpp"
#include "capture/layout.hpp"
#include "capture/move_guard.hpp"
#include "capture/widen.hpp"
#include "catalog/lifecycle.hpp"
#include "catalog/partitions.hpp"

namespace trellis::capture {

namespace {

std::string name_of(const catalog::CapturedTable& t) {
  return t.schema + "." + t.name;
}

}  // namespace

std::optional<DriftFinding> table_drift(pg::Connection& conn, const catalog::CapturedTable& t,
                                        const std::optional<bind::TableDescription>& info,
                                        const compile::CaptureObjects& capture) {
  const std::string table = name_of(t);
  if (!info)
    return DriftFinding{catalog::FailureKind::disruption,
                        {},
                        fmt::format("table {} was dropped or renamed; its changes are no longer "
                                    "captured. Restore it, then RESUME the transform (it rebuilds)",
                                    table)};
  if (info->oid != t.relid)
    return DriftFinding{
        catalog::FailureKind::disruption,
        {},
        fmt::format("table {} was replaced by another table of the same name; changes "
                    "may be missing. RESUME the transform to capture the new table "
                    "and rebuild",
                    table)};
  if (conn.exec(capture.trigger_probe).get_int(0, 0) < 4)
    return DriftFinding{
        catalog::FailureKind::disruption,
        {},
        fmt::format("capture triggers on {} were disabled or dropped (e.g. by ALTER "
                    "TABLE ... DISABLE TRIGGER ALL); changes made meanwhile may be "
                    "missing. RESUME the transform to reinstall capture and rebuild",
                    table)};
  if (info->partitioned())
    if (auto partition = catalog::Partitions(capture.catalog_schema)
                             .without_capture(conn, t.id, capture.trigger_like))
      return DriftFinding{
          catalog::FailureKind::disruption,
          {},
          fmt::format("capture triggers on partition {} of {} were disabled or dropped; "
                      "changes written straight into it meanwhile may be missing. RESUME the "
                      "transform to reinstall capture and rebuild",
                      *partition, table)};
  if (info->partitioned() && installed_move_guard(t) &&
      !move_guard_intact(conn, t, {capture.catalog_schema}))
    return DriftFinding{
        catalog::FailureKind::disruption,
        {},
        fmt::format("the capture trigger {} on {} or on one of its partitions was disabled or "
                    "dropped; rows a MERGE moved between partitions meanwhile may be missing. "
                    "RESUME the transform to reinstall capture and rebuild",
                    compile::move_guard_trigger(t, {capture.catalog_schema}), table)};
  if (t.installed_digest && conn.exec(capture.function_digest).get_opt(0, 0) != t.installed_digest)
    return DriftFinding{
        catalog::FailureKind::disruption,
        {},
        fmt::format("a capture trigger function of {} was replaced or dropped outside "
                    "Trellis; changes made meanwhile may be missing. RESUME the "
                    "transform to reinstall capture and rebuild",
                    table)};
  if (info->inherits || !info->partition_of.empty())
    return DriftFinding{
        catalog::FailureKind::capture,
        {},
        info->inherits
            ? fmt::format("table {} joined a table inheritance hierarchy (INHERITS); "
                          "its writes no longer all fire its triggers. Take it out "
                          "(ALTER TABLE ... NO INHERIT), then RESUME the transform",
                          table)
            : fmt::format("table {} was attached as a partition of {}; a write "
                          "through {} does not fire its triggers. Detach it, or "
                          "redefine the transform over {}, then RESUME it",
                          table, info->partition_of, info->partition_of, info->partition_of)};
  if (info->rls_applies)
    return DriftFinding{
        catalog::FailureKind::capture,
        {},
        fmt::format("row-level security on {} now applies to Trellis's role; disable "
                    "it or exempt the role, then RESUME the transform",
                    table)};
  if (info->subscribed)
    return DriftFinding{
        catalog::FailureKind::capture,
        {},
        fmt::format("a logical-replication subscription writes into {}; its changes "
                    "bypass capture. Drop the subscription, then RESUME the transform",
                    table)};
  std::vector<std::string> key;
  for (const auto& c : t.key) key.push_back(c.name);
  auto same_set = [&](std::vector<std::string> cols) {
    std::vector<std::string> k = key;
    std::sort(cols.begin(), cols.end());
    std::sort(k.begin(), k.end());
    return cols == k;
  };
  bool unique = same_set(info->primary_key) ||
                std::any_of(info->unique_keys.begin(), info->unique_keys.end(), same_set);
  if (!unique)
    return DriftFinding{
        catalog::FailureKind::capture, key,
        fmt::format("the key ({}) of {} is no longer a primary key or unique index; "
                    "restore it, then RESUME the transform",
                    fmt::join(key, ", "), table)};
  return std::nullopt;
}

namespace {

// Columns one reader reads that are gone or retyped.
std::optional<DriftFinding> reader_finding(const catalog::CapturedTable& t,
                                           const bind::TableDescription& info,
                                           const catalog::TransformDef& d) {
  DriftFinding f{catalog::FailureKind::capture, {}, "", true};
  std::vector<std::string> problems;
  for (const auto& c : d.reads_of(t.id)) {
    const auto* col = info.find(c.name);
    if (!col) {
      f.columns.push_back(c.name);
      f.widening = false;
      problems.push_back(fmt::format("column \"{}\" was renamed or dropped", c.name));
    } else if (col->column.type != c.type) {
      f.columns.push_back(c.name);
      // Widening in place rewrites a source's copies; a joined table's
      // retype is a rebuild.
      f.widening = f.widening && t.id == d.source_table_id &&
                   is_catalog_only_widening(c.type, col->column.type);
      problems.push_back(
          fmt::format("column \"{}\" was retyped from {} to {}", c.name, c.type, col->column.type));
    }
  }
  if (problems.empty()) return std::nullopt;
  f.error = fmt::format(
      "{} of {}, which {} reads; restore it (or redefine the transform), then "
      "RESUME it",
      fmt::join(problems, "; "), name_of(t), d.target_name());
  return f;
}

}  // namespace

DriftWatch::DriftWatch(catalog::Store& store, compile::RingShape ring)
    : store_(store), ring_(std::move(ring)) {}

int DriftWatch::check(pg::Connection& conn) {
  auto defs = store_.running_transforms(conn);
  int paused = 0;
  for (const auto& table : store_.captured_tables(conn)) {
    if (!table.installed_signature) continue;
    std::vector<const catalog::TransformDef*> readers;
    for (const auto& d : defs)
      if (d.reads_table(table.id)) readers.push_back(&d);
    if (readers.empty()) continue;
    auto info = bind::describe_table(conn, table.schema, table.name);
    auto shared = table_drift(conn, table, info, compile::capture_objects(table, ring_));
    // A drop moved the columns the triggers name by place: they run their
    // fallback path until the reconciler reinstalls them for the new layout.
    if (!shared && layout_moved(table, *info)) {
      spdlog::info("columns of {} moved; capture is reinstalled for them", name_of(table));
      store_.mark_capture_stale(conn, table.id);
    }
    for (const auto* d : readers) {
      auto finding = shared ? shared : reader_finding(table, *info, *d);
      if (!finding) continue;
      if (finding->widening) {
        std::string why;
        auto widened = widen_in_place(conn, store_, *d, why);
        if (widened != Widened::not_widening) continue;  // done, or tried again next check
        finding->error += " (not applied in place: " + why + ")";
      }
      nlohmann::json failure = {{"kind", catalog::name(finding->kind)},
                                {"table", name_of(table)},
                                {"columns", finding->columns},
                                {"error", finding->error}};
      if (!catalog::Lifecycle(store_).pause_on_drift(conn, d->id, failure.dump())) continue;
      ++paused;
      base::log_event(spdlog::level::warn, "paused", d->target_name(), failure,
                      fmt::format("transform {} paused: {}", d->target_name(), finding->error));
    }
  }
  return paused;
}

}  // namespace trellis::capture
