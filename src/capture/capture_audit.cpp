// Capture audit; see capture_audit.hpp. A table with a fault the drift
// check knows (which pauses its readers on its next pass) reports that
// fault alone; otherwise each trigger and function is inspected, so the
// report names the exact trigger, function or privilege at fault.
#include "capture/capture_audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "bind/table_description.hpp"
#include "capture/drift.hpp"
#include "capture/partitions.hpp"
#include "catalog/partitions.hpp"

namespace trellis::capture {

namespace {

const char* event_word(const std::string& event) {
  if (event == "ins") return "INSERT";
  if (event == "upd") return "UPDATE";
  if (event == "del") return "DELETE";
  return "TRUNCATE";
}

constexpr const char* kFix = "RESUME the transform to reinstall capture and rebuild";

// The faults one trigger_audit row shows.
void trigger_faults(const pg::Result& r, int row, const std::string& table,
                    std::vector<CaptureFault>& out) {
  std::string event = event_word(r.get(row, 0));
  std::string trigger = r.get(row, 1);
  if (!r.get_bool(row, 2)) {
    out.push_back({table, fmt::format("the capture trigger {} ({}) on {} is missing; {}", trigger,
                                      event, table, kFix)});
  } else {
    if (r.get(row, 3) != "A")
      out.push_back(
          {table, fmt::format("the capture trigger {} ({}) on {} is not enabled ALWAYS (tgenabled "
                              "'{}'); {}",
                              trigger, event, table, r.get(row, 3), kFix)});
    if (!r.get_bool(row, 4))
      out.push_back({table, fmt::format("the capture trigger {} ({}) on {} does not call its "
                                        "capture function; {}",
                                        trigger, event, table, kFix)});
  }
  if (!r.get_bool(row, 5)) {
    out.push_back({table, fmt::format("the capture function of {} on {} is missing; {}", event,
                                      table, kFix)});
    return;
  }
  if (!r.get_bool(row, 6))
    out.push_back({table, fmt::format("the capture function of {} on {} is not SECURITY DEFINER; "
                                      "{}",
                                      event, table, kFix)});
  std::string owner = r.get(row, 7);
  for (const auto& privilege : nlohmann::json::parse(r.get(row, 8)))
    out.push_back(
        {table, fmt::format("role {}, which the capture functions of {} run as, lacks {}; "
                            "run: GRANT {} TO {}",
                            owner, table, privilege.get<std::string>(),
                            privilege.get<std::string>(), owner)});
}

}  // namespace

std::vector<CaptureFault> audit_capture(pg::Connection& conn, catalog::Store& store,
                                        const compile::RingShape& ring,
                                        const catalog::TransformDef& def,
                                        const std::function<void()>& after_tables_read) {
  std::vector<CaptureFault> out;
  // Every read in one snapshot: capture reinstalled (a reader paused, so
  // capture reads fewer columns) between reading a table's recorded digest
  // and reading its functions would otherwise look like a function replaced
  // outside Trellis. The reinstall commits its functions and their digest
  // together, so one snapshot sees both before it or both after it.
  pg::Transaction snapshot(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY");
  auto tables = store.captured_tables(conn);
  if (after_tables_read) after_tables_read();
  for (const auto& table : tables) {
    if (!def.reads_table(table.id)) continue;
    std::string name = table.schema + "." + table.name;
    if (!table.installed_signature) {
      out.push_back({name, fmt::format("capture is not installed on {}; {}", name, kFix)});
      continue;
    }
    auto objects = compile::capture_objects(table, ring);
    auto info = bind::describe_table(conn, table.schema, table.name);
    if (!info || info->oid != table.relid) {
      out.push_back({name, table_drift(conn, table, info, objects)->error});
      continue;
    }
    size_t before = out.size();
    auto rows = conn.exec(objects.trigger_audit);
    std::vector<CaptureFault> faults;
    for (int i = 0; i < rows.rows(); ++i) trigger_faults(rows, i, name, faults);
    // Each partition's own triggers and functions, named as the partition.
    if (info->partitioned())
      for (const auto& node : catalog::Partitions(store.schema()).recorded(conn, table.id)) {
        if (node.left_tree || !node.exists) continue;
        auto node_rows = conn.exec(
            compile::capture_objects(captured_partition(table, node), ring).trigger_audit);
        std::string partition = "partition " + node.display() + " of " + name;
        for (int i = 0; i < node_rows.rows(); ++i) trigger_faults(node_rows, i, partition, faults);
      }
    for (auto& f : faults)  // a privilege the owner lacks shows on every event's row
      if (std::none_of(out.begin() + static_cast<std::ptrdiff_t>(before), out.end(),
                       [&](const CaptureFault& o) { return o.detail == f.detail; }))
        out.push_back(std::move(f));
    if (out.size() > before) continue;
    if (auto drift = table_drift(conn, table, info, objects)) out.push_back({name, drift->error});
  }
  snapshot.commit();
  return out;
}

}  // namespace trellis::capture
