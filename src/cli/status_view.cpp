// Renders status records as a table with hold-ups in plain words (their JSON form is
// api/records_json).
#include "cli/status_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cli/text_table.hpp"

namespace trellis::cli {

namespace {

// Error texts may span lines; a table cell may not.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : sep) + item;
  return out;
}

std::string since(const std::string& when) {
  return when.empty() ? "" : " since " + when;
}

std::string describe_capture_failure(const Status& s) {
  const auto& f = *s.capture_failure;
  std::string cols = f.columns.empty() ? "" : " (columns " + join(f.columns) + ")";
  std::string err = f.error.empty() ? "" : ": " + one_line(f.error);
  if (f.is(CaptureFailureKind::halt))
    return fmt::format(
        "drain halted on {}{}{}{}; {} and what reads it are paused; fix the cause, then "
        "RESUME TRANSFORM {}",
        f.table, cols, err, since(f.detected_at), s.target, s.target);
  // The stored error of a disruption already says what was lost and that a
  // RESUME repairs it; the view adds only the statement to run.
  if (f.is(CaptureFailureKind::disruption) && f.error.find("RESUME") != std::string::npos)
    return fmt::format(
        "capture on {} was changed outside Trellis{}{}; to repair: RESUME TRANSFORM {}", f.table,
        err, since(f.detected_at), s.target);
  if (f.is(CaptureFailureKind::disruption))
    return fmt::format(
        "capture on {} was changed outside Trellis{}{}; changes may be missing; RESUME "
        "TRANSFORM {} reinstalls capture and rebuilds",
        f.table, err, since(f.detected_at), s.target);
  return fmt::format(
      "capture of {}{} is broken{}{}; fix the source table, then RESUME TRANSFORM {}", f.table,
      cols, err, since(f.detected_at), s.target);
}

}  // namespace

namespace {

// "[#####...............] 25%"
std::string bar(double fraction) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  constexpr int kWidth = 20;
  int filled = static_cast<int>(fraction * kWidth + 0.5);
  return fmt::format("[{}{}] {}%", std::string(filled, '#'), std::string(kWidth - filled, '.'),
                     static_cast<int>(fraction * 100 + 1e-6));
}

// ", 3000 rows/s, 2 s left" for a count moving toward `remaining` more.
std::string rate_text(double per_second, double remaining, const char* unit) {
  if (per_second == 0) return ", stalled";
  std::string out = fmt::format(", {:.0f} {}/s", per_second, unit);
  if (auto left = eta(std::abs(remaining), std::abs(per_second));
      left && per_second * remaining > 0)
    out += ", " + *left + " left";
  return out;
}

std::string megabytes(int64_t bytes) {
  return fmt::format("{:.1f} MB", static_cast<double>(bytes) / (1024 * 1024));
}

}  // namespace

std::string build_progress(const Status& s, std::optional<double> per_second) {
  std::string rate;
  double remaining = static_cast<double>(s.build_rows_estimate - s.build_rows_done);
  if (per_second) rate = rate_text(*per_second, std::max(remaining, 1.0), "rows");
  if (s.build_rows_estimate <= 0) return fmt::format("{} rows built{}", s.build_rows_done, rate);
  return fmt::format("{}/{} rows {}{}", s.build_rows_done, s.build_rows_estimate,
                     bar(static_cast<double>(s.build_rows_done) / s.build_rows_estimate), rate);
}

std::string backlog_progress(const RingBacklog& backlog, const ProgressRates& rates) {
  std::string out =
      fmt::format("ring backlog: {} keys, {}", backlog.rows, megabytes(backlog.bytes));
  double peak = rates.peak("ring backlog");
  if (peak > 0)
    out += " " + bar(1.0 - static_cast<double>(backlog.rows) / peak) + " drained of the peak";
  if (auto r = rates.per_second("ring backlog"); r && backlog.rows > 0)
    out += rate_text(*r, -static_cast<double>(backlog.rows), "keys");
  return out;
}

std::vector<std::string> describe_status(const Status& s, const ProgressRates* rates) {
  std::vector<std::string> out;
  for (const auto& w : s.upstream_waits) {
    std::string fix = "its build starts by itself once that is live";
    auto upstream = lifecycle_named(w.status);
    if (upstream == Lifecycle::paused)
      fix = fmt::format("RESUME TRANSFORM {}; this one builds once that is live", w.transform);
    else if (upstream == Lifecycle::quarantined)
      fix = fmt::format("fix its cause and RESUME TRANSFORM {}; this one builds once that is live",
                        w.transform);
    out.push_back(fmt::format("waits for upstream transform {}, which is {}; {}", w.transform,
                              w.status, fix));
  }
  if (s.is(Lifecycle::backfilling))
    out.push_back("building: " +
                  build_progress(s, rates ? rates->per_second(s.target) : std::nullopt));
  if (const auto& w = s.capture_wait) {
    std::vector<std::string> pids;
    for (int pid : w->blocking_pids) pids.push_back(std::to_string(pid));
    std::string mode = w->lock_mode.empty() ? "" : " (" + w->lock_mode + ")";
    out.push_back(fmt::format(
        "waiting for a lock{} on {} held by pids {}{}; fix: commit or end those sessions "
        "(pg_terminate_backend)",
        mode, w->table, pids.empty() ? "(unknown)" : join(pids), since(w->since)));
  }
  if (const auto& f = s.drain_failure)
    out.push_back(fmt::format("drain keeps failing on {}: {}{}{}, {} attempts; fix the cause",
                              f->table, one_line(f->error),
                              f->sqlstate.empty() ? "" : " (" + f->sqlstate + ")", since(f->since),
                              f->attempts));
  if (const auto& f = s.backfill_failure)
    out.push_back(fmt::format(
        "build keeps failing{}: {}, {} attempts{}; fix the cause (it retries by itself)",
        f->chunk.empty() ? "" : " on chunk " + f->chunk, one_line(f->error), f->attempts,
        f->next_retry_at.empty() ? "" : ", next retry at " + f->next_retry_at));
  if (s.capture_failure) out.push_back(describe_capture_failure(s));
  if (const auto& h = s.held_keys; h && h->count > 0)
    out.push_back(fmt::format(
        "{} source key{} held in quarantine{}; their target rows keep their old values; `trellis "
        "quarantine list {}` shows them and their errors; fix the cause, then {}",
        h->count, h->count == 1 ? "" : "s", h->oldest.empty() ? "" : " (oldest " + h->oldest + ")",
        s.target,
        s.is(Lifecycle::quarantined)
            ? "RESUME TRANSFORM " + s.target + " (the fuse tripped; it rebuilds)"
            : "`trellis quarantine release " + s.target + " TABLE KEY`"));
  for (const auto& c : s.correcting)
    out.push_back(
        fmt::format("correcting for partition {}{}{}: the keys it {} are re-derived; "
                    "live again once they are",
                    c.partition, c.reason.empty() ? "" : " (" + c.reason + ")", since(c.since),
                    c.reason == "attached" ? "holds" : "held"));
  if (!s.paused_upstream_columns.empty())
    out.push_back(fmt::format("reads paused upstream column{} {}; RESUME them to catch up",
                              s.paused_upstream_columns.size() == 1 ? "" : "s",
                              join(s.paused_upstream_columns)));
  for (const auto& c : s.paused_columns) {
    std::string why = c.cause == "quarantine"
                          ? fmt::format(" after its values kept failing ({}{})", one_line(c.error),
                                        c.sqlstate.empty() ? "" : ", " + c.sqlstate)
                          : " by PAUSE TRANSFORM";
    std::string fix =
        c.cause == "quarantine" ? "fix the cause, then RESUME TRANSFORM" : "RESUME TRANSFORM";
    out.push_back(
        fmt::format("column {} is paused{}{} and keeps its last values; {} {}.{} rebuilds it",
                    c.column, why, since(c.since), fix, s.target, c.column));
  }
  for (const auto& g : s.source_index_gaps)
    out.push_back(fmt::format("warning: no source index for {} on {}({}); run: {}", g.role, g.table,
                              join(g.columns), g.create_index));
  if (out.empty()) {
    if (s.is(Lifecycle::waiting_to_backfill))
      out.push_back("waiting for the staging worker to start the build");
    else if (s.is(Lifecycle::paused))
      out.push_back(fmt::format("paused; RESUME TRANSFORM {} rebuilds it", s.target));
    else if (s.is(Lifecycle::quarantined))
      out.push_back(fmt::format(
          "too many held keys tripped its fuse; fix the cause, then RESUME TRANSFORM {}",
          s.target));
    else if (s.is(Lifecycle::catching_up))
      out.push_back("built; applying the changes made meanwhile");
  }
  return out;
}

namespace {

std::string render_relationships(const std::vector<Relationship>& relationships) {
  if (relationships.empty()) return "";
  TextTable table({"RELATIONSHIP", "FROM", "TO", "CARDINALITY"});
  for (const auto& r : relationships)
    table.add_row({r.name, r.from_table + "." + r.from_column, r.to_table + "." + r.to_column,
                   r.cardinality == "to_one" ? "to-one" : "to-many"});
  return "\n" + table.render();
}

}  // namespace

std::string render_status_table(const std::vector<Status>& statuses, const WorkerLiveness& workers,
                                const std::string& instance,
                                const std::vector<Relationship>& relationships,
                                const ProgressRates* rates) {
  std::string out;
  if (statuses.empty()) {
    out += fmt::format("no transforms in instance {}; define one with `trellis apply`\n", instance);
  } else {
    TextTable table({"TARGET", "STATUS", "DETAILS"});
    for (const auto& s : statuses) {
      auto details = describe_status(s, rates);
      table.add_row({s.target, s.status, details.empty() ? "" : details.front()});
      for (size_t i = 1; i < details.size(); ++i) table.add_row({"", "", details[i]});
    }
    out += table.render();
  }
  out += render_relationships(relationships);
  out += fmt::format("\nworkers: staging worker {}, drain workers {}\n",
                     workers.staging ? "live" : "not running",
                     workers.drains ? "live" : "not running");
  if (!workers.staging && !workers.drains)
    out +=
        "warning: no staging worker and no drain workers are running; nothing will move: "
        "start `trellis run`\n";
  else if (!workers.staging)
    out += "warning: no staging worker is running; nothing will move: start `trellis run`\n";
  else if (!workers.drains)
    out +=
        "warning: no drain workers are running; nothing will move: start `trellis run "
        "--no-staging` to add drain threads\n";
  return out;
}

}  // namespace trellis::cli
