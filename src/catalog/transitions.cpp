// The lifecycle table (transitions.hpp): from-statuses, to-status and the
// SET list of every operation, built from named pieces of build state so
// that a reset reads the same wherever it happens.
#include "catalog/transitions.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "trellis/error.hpp"

namespace trellis::catalog {

namespace {

using S = Status;

// The build claim (a drain thread owning the build) let go.
constexpr std::string_view kReleaseClaim = "build_owner_pid = NULL, build_owner_start = NULL";
constexpr std::string_view kBumpVersion = "version = version + 1";

std::string pieces(std::initializer_list<std::string_view> list) {
  std::string out;
  for (auto piece : list) out += (out.empty() ? "" : ", ") + std::string(piece);
  return out;
}

std::string status_is(Status s) {
  return "status = " + literal(s);
}

std::vector<Transition> make_table() {
  const std::vector<S> all = {S::waiting_to_backfill, S::backfilling, S::live, S::paused,
                              S::quarantined};
  const std::vector<S> running = {S::backfilling, S::live};
  std::string pause = pieces({status_is(S::paused), kReleaseClaim, "updated_at = now()"});
  return {
      {Operation::define, "define", {}, S::waiting_to_backfill, ""},
      {Operation::start_build,
       "start build",
       {S::waiting_to_backfill},
       S::backfilling,
       pieces({status_is(S::backfilling), "build_phase = " + literal(first_phase()),
               "build_fence = NULL, build_cursor = NULL, build_rows_done = 0, capture_wait = "
               "NULL, capture_failure = NULL, updated_at = now()"})},
      // A full build under way restarts too: its earlier chunks wrote the old fields.
      {Operation::start_field_build, "start field build", running, S::backfilling,
       pieces({status_is(S::backfilling), "build_phase = " + literal(BuildPhase::awaiting_capture),
               "build_fence = NULL, build_cursor = NULL, build_rows_done = 0", kReleaseClaim,
               "build_not_before = NULL, backfill_failure = NULL"})},
      // Every source key and every key the target holds re-derived from the
      // start; a build still awaiting capture keeps waiting for it first.
      {Operation::rebuild_in_place, "rebuild in place", running, S::backfilling,
       pieces({status_is(S::backfilling),
               "build_phase = CASE WHEN build_phase = " + literal(BuildPhase::awaiting_capture) +
                   " THEN build_phase ELSE " + literal(first_phase()) + " END",
               "build_fence = CASE WHEN build_phase = " + literal(BuildPhase::awaiting_capture) +
                   " THEN build_fence END",
               "build_fields = NULL, build_cursor = NULL, build_sweep_target = true, "
               "build_rows_done = 0",
               kReleaseClaim,
               "build_not_before = NULL, backfill_failure = NULL, updated_at = now()"})},
      {Operation::go_live,
       "go live",
       {S::backfilling},
       S::live,
       pieces({status_is(S::live),
               "build_phase = NULL, build_cursor = NULL, build_fence = NULL, build_not_before = "
               "NULL",
               kReleaseClaim,
               "build_sweep_target = false, build_fields = NULL, backfill_failure = NULL, "
               "updated_at = now()"})},
      // Pausing lets any build claim go, so the build does not go on.
      {Operation::pause, "pause", all, S::paused, pause},
      {Operation::pause_on_drift, "pause on drift", running, S::paused, pause},
      {Operation::halt,
       "halt",
       {S::waiting_to_backfill, S::backfilling, S::live, S::quarantined},
       S::paused,
       pause},
      {Operation::quarantine, "quarantine", running, S::quarantined,
       pieces({status_is(S::quarantined), "updated_at = now()"})},
      // The rebuild re-derives every key and sweeps the target's (RESUME
      // revalidates the definition, so the version moves on).
      {Operation::resume,
       "resume",
       {S::paused, S::quarantined},
       S::waiting_to_backfill,
       pieces({kBumpVersion, status_is(S::waiting_to_backfill),
               "build_sweep_target = true, build_phase = NULL, build_fields = NULL, build_fence = "
               "NULL, build_cursor = NULL, capture_failure = NULL, drain_failure = NULL, "
               "backfill_failure = NULL, updated_at = now()"})},
      {Operation::drop, "drop", {S::paused}, std::nullopt, ""},
  };
}

}  // namespace

const std::vector<Transition>& transitions() {
  static const std::vector<Transition> table = make_table();
  return table;
}

const Transition& transition(Operation op) {
  for (const auto& t : transitions())
    if (t.op == op) return t;
  throw Error(ErrorCode::internal, "no lifecycle transition for an operation");
}

bool allowed(Operation op, Status from) {
  const auto& states = transition(op).from;
  return std::find(states.begin(), states.end(), from) != states.end();
}

std::string from_condition(Operation op, std::string_view alias) {
  std::string list;
  for (auto s : transition(op).from) list += (list.empty() ? "" : ", ") + literal(s);
  std::string column = alias.empty() ? "status" : std::string(alias) + ".status";
  return column + " IN (" + list + ")";
}

std::string running(std::string_view alias) {
  std::string column = alias.empty() ? "status" : std::string(alias) + ".status";
  return column + " IN (" + literal(S::backfilling) + ", " + literal(S::live) + ")";
}

std::string read_table_ids(std::string_view alias) {
  std::string a = alias.empty() ? "" : std::string(alias) + ".";
  return "(ARRAY[" + a + "source_table_id] || ARRAY(SELECT (j ->> 'table_id')::int FROM " +
         "jsonb_array_elements(coalesce(" + a + "definition -> 'joins', '[]'::jsonb)) j))";
}

std::string no_worker_transaction_before(const std::string& fence, const std::string& workers) {
  return fmt::format(
      "NOT EXISTS (SELECT 1 FROM pg_stat_activity a JOIN {1} w ON w.pid = a.pid AND "
      "w.backend_start = a.backend_start WHERE a.pid <> pg_backend_pid() AND a.xact_start < {0})",
      fence, workers);
}

bool running(Status status) {
  return status == S::backfilling || status == S::live;
}

std::string_view bump_version() {
  return kBumpVersion;
}

std::optional<BuildPhase> next_phase(BuildPhase phase, bool sweep, Shape shape) {
  if (phase == BuildPhase::fields) return std::nullopt;
  if (phase == BuildPhase::ranges)
    return shape == Shape::aggregate ? BuildPhase::group_ranges : BuildPhase::parked;
  if (phase == BuildPhase::group_ranges) return BuildPhase::parked;
  if (phase == BuildPhase::parked) return std::nullopt;
  if (phase == BuildPhase::source && sweep) return BuildPhase::target;
  if (phase != BuildPhase::groups && shape == Shape::aggregate) return BuildPhase::groups;
  return std::nullopt;
}

BuildPhase first_phase() {
  return BuildPhase::ranges;
}

}  // namespace trellis::catalog
