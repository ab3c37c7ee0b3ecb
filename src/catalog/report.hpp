// What the status of a transform is made of, as the catalog holds it: its
// status and build progress, the hold-up records (json, as written by the
// stages that hit them), held keys, paused columns upstream and its own,
// and the upstreams a waiting transform waits for. api/status turns a
// report into the SPEC's status record.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "catalog/definition.hpp"
#include "catalog/store.hpp"
#include "pg/connection.hpp"

namespace trellis::catalog {

struct UpstreamWaitRow {
  std::string target;  // schema.table of the upstream's target
  Status status = Status::waiting_to_backfill;
};

struct TransformReport {
  std::string target;  // schema.table
  TransformDef def;
  std::optional<nlohmann::json> capture_wait;
  std::optional<nlohmann::json> capture_failure;
  std::optional<nlohmann::json> backfill_failure;
  std::optional<nlohmann::json> drain_failure;
  int64_t build_rows_done = 0;
  int64_t build_rows_estimate = 0;
  int64_t held_keys = 0;
  std::string oldest_held;  // when the oldest held key was held ("" when none)
  // Paused columns (schema.table.column) of upstream targets this one reads.
  std::vector<std::string> paused_upstream_columns;
  // Its own paused columns: column name -> {since, reason[, error, sqlstate]},
  // as PAUSE TRANSFORM t.col and the column fuse record them.
  nlohmann::json paused_columns = nlohmann::json::object();
  std::vector<UpstreamWaitRow> upstream_waits;
  // Partition events the tables it reads are being corrected for, oldest
  // first (capture/partitions): empty unless it is backfilling or live.
  struct CorrectingRow {
    std::string partition, reason, since;
  };
  std::vector<CorrectingRow> correcting;
};

// Every transform's report, or the one whose target is (schema, table), in id order.
std::vector<TransformReport> read_reports(
    pg::Connection& conn, const Store& store,
    const std::optional<std::pair<std::string, std::string>>& target);

}  // namespace trellis::catalog
