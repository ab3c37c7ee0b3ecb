// How `trellis status` shows status records: a table in plain words (the JSON form,
// `--json`, is api/records_json).
#pragma once

#include <string>
#include <vector>

#include "cli/progress_rate.hpp"
#include "trellis/status.hpp"
#include "trellis/trellis.hpp"

namespace trellis::cli {

// One line per non-empty hold-up (and build progress), each in plain words
// with its fix. Empty for a live transform that nothing holds up. `rates`
// (status --watch) adds each build's rate and time left.
std::vector<std::string> describe_status(const Status& status,
                                         const ProgressRates* rates = nullptr);

// "1200/5000 rows [####................] 24%" (or "1200 rows" without an
// estimate); with a rate, ", 3000 rows/s, 2 s left" (or ", stalled").
std::string build_progress(const Status& status, std::optional<double> per_second = {});

// status --watch's line on the ring: "ring backlog: 12000 keys, 1.2 MB
// [######..............] 30% drained of the peak, -5000 keys/s, 3 s left".
std::string backlog_progress(const RingBacklog& backlog, const ProgressRates& rates);

struct WorkerLiveness {
  bool staging = false;
  bool drains = false;
};

// The status table, the relationships (when there are any), then a line on
// workers and a plain warning when nothing will move.
std::string render_status_table(const std::vector<Status>& statuses, const WorkerLiveness& workers,
                                const std::string& instance,
                                const std::vector<Relationship>& relationships = {},
                                const ProgressRates* rates = nullptr);

}  // namespace trellis::cli
