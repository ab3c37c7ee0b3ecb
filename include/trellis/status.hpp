// The status record of one transform (README, "Operations", explains each field): its lifecycle
// word and the hold-up fields, each empty when nothing holds the transform up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trellis {

// The lifecycle words of Status::status (and Applied::status) as a type, for
// code that branches on them.
enum class Lifecycle { waiting_to_backfill, backfilling, catching_up, live, paused, quarantined };
std::string word(Lifecycle lifecycle);
std::optional<Lifecycle> lifecycle_named(std::string_view word);

struct BackfillFailure {
  std::string chunk;
  int attempts = 0;
  std::string error;
  std::string next_retry_at;
};

struct CaptureWait {
  std::string table;
  std::string lock_mode;
  std::vector<int> blocking_pids;
  std::string since;
};

// Why capture or the data path stopped a transform (CaptureFailure::kind):
// capture could not be installed, a privilege error halted it, or capture
// was changed outside Trellis.
enum class CaptureFailureKind { capture, halt, disruption };

struct CaptureFailure {
  std::string kind;  // capture | halt | disruption
  bool is(CaptureFailureKind k) const;
  std::string table;
  std::vector<std::string> columns;
  std::string error;
  std::string detected_at;
};

struct HeldKeys {
  int64_t count = 0;
  std::string oldest;
};

struct DrainFailure {
  std::string table;
  std::string error;
  std::string sqlstate;
  std::string since;
  int attempts = 0;
};

struct SourceIndexGap {
  std::string role;  // group_by | join:<alias>
  std::string table;
  std::vector<std::string> columns;
  std::string create_index;
};

struct CorrectingNode {
  std::string partition;
  std::string reason;
  std::string since;
};

// One of the transform's own fields frozen at its last values, and why.
struct PausedColumn {
  std::string column;
  std::string cause;     // operator (PAUSE TRANSFORM t.col) | quarantine (the column fuse)
  std::string since;     // when it was paused
  std::string error;     // quarantine: the error of the values that tripped the fuse
  std::string sqlstate;  // quarantine: its SQLSTATE
};

// An upstream transform whose target this one reads and which is not live: a
// waiting_to_backfill transform (after RESUME of a reader and its upstream
// together, say) starts its build only once every upstream is live.
struct UpstreamWait {
  std::string transform;  // schema.table of the upstream's target
  std::string status;     // its status: waiting_to_backfill | backfilling | paused | quarantined
};

struct Status {
  std::string target;  // schema.table
  std::string
      status;  // waiting_to_backfill | backfilling | catching_up | live | paused | quarantined
  std::optional<BackfillFailure> backfill_failure;
  std::optional<CaptureWait> capture_wait;
  std::optional<CaptureFailure> capture_failure;
  std::optional<HeldKeys> held_keys;
  std::optional<DrainFailure> drain_failure;
  std::vector<SourceIndexGap> source_index_gaps;
  std::vector<CorrectingNode> correcting;
  std::vector<std::string> paused_upstream_columns;
  // Build progress (not part of the seed record, shown by `trellis status`).
  int64_t build_rows_done = 0;
  int64_t build_rows_estimate = 0;
  // Its own fields frozen by PAUSE TRANSFORM t.col or by the column fuse,
  // in column order by name (not part of the seed record; `trellis status`
  // shows them, in text and JSON).
  std::vector<PausedColumn> paused_columns;
  // Upstream transforms that are not live, which a waiting_to_backfill
  // transform waits for before its build starts (not part of the seed
  // record, shown by `trellis status`); empty when nothing is waited for.
  std::vector<UpstreamWait> upstream_waits;

  bool is(Lifecycle lifecycle) const;
};

}  // namespace trellis
