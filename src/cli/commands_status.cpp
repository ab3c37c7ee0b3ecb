// `trellis status [TARGET] [--json] [--watch]`: status records, as a table or JSON.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>

#include "api/records_json.hpp"
#include "cli/commands.hpp"
#include "cli/signals.hpp"
#include "cli/status_view.hpp"

namespace trellis::cli {

namespace {

struct StatusArgs {
  std::string target;
  bool json = false;
  bool watch = false;
};

std::vector<Status> read_statuses(Trellis& trellis, const GlobalOptions& global,
                                  const std::string& target) {
  if (target.empty()) return trellis.status_all();
  auto one = trellis.status(target);
  if (!one)
    throw Error(ErrorCode::not_found,
                fmt::format("no transform named {} in instance {}; `trellis status` lists them",
                            target, global.schema));
  return {*one};
}

// One screenful: the JSON document, or the table with the workers line.
// Watching (`rates` given), builds show their rate and time left, and a
// line shows the ring's backlog moving.
std::string render(Trellis& trellis, const GlobalOptions& global, const StatusArgs& args,
                   bool compact, ProgressRates* rates = nullptr) {
  auto statuses = read_statuses(trellis, global, args.target);
  if (args.json) {
    nlohmann::ordered_json doc;
    if (!args.target.empty()) {
      doc = api::status_json(statuses.front());
    } else {
      doc = nlohmann::ordered_json::array();
      for (const auto& s : statuses) doc.push_back(api::status_json(s));
    }
    return doc.dump(compact ? -1 : 2) + "\n";
  }
  WorkerLiveness workers{trellis.has_live_staging_worker(), trellis.has_live_drain_workers()};
  std::string backlog;
  if (rates) {
    auto now = ProgressRates::Clock::now();
    for (const auto& s : statuses)
      if (s.is(Lifecycle::backfilling))
        rates->observe(s.target, static_cast<double>(s.build_rows_done), now);
    auto ring = trellis.ring_backlog();
    rates->observe("ring backlog", static_cast<double>(ring.rows), now);
    backlog = backlog_progress(ring, *rates) + "\n";
  }
  std::vector<Relationship> relationships;
  if (args.target.empty()) relationships = trellis.relationships();
  return render_status_table(statuses, workers, global.schema, relationships, rates) + backlog;
}

// Redraws every second until SIGINT/SIGTERM. A failed read (a restart, say)
// is shown and retried; the first one ends the command.
int watch(const GlobalOptions& global, const StatusArgs& args) {
  StopSignals signals;
  auto trellis = Trellis::connect(handle_options(global));
  bool tty = isatty(STDOUT_FILENO) != 0;
  bool first = true;
  ProgressRates rates;
  do {
    std::string screen;
    try {
      screen = render(*trellis, global, args, /*compact=*/args.json, &rates);
    } catch (const Error& e) {
      if (first) throw;
      auto line = fmt::format("error ({}): {}; retrying\n", to_string(e.code()), e.what());
      if (args.json) {  // stdout stays one JSON document per line
        std::cerr << line << std::flush;
        continue;
      }
      screen = line;
    }
    bool first_screen = first;
    first = false;
    if (tty && !args.json)
      std::cout << "\033[H\033[2J";  // redraw in place
    else if (!first_screen && !args.json)
      std::cout << "\n";
    if (!args.json)
      screen = fmt::format("{:%Y-%m-%d %H:%M:%S} (every 1 s; Ctrl-C stops)\n",
                           fmt::localtime(std::time(nullptr))) +
               screen;
    std::cout << screen << std::flush;
  } while (!signals.wait_for(std::chrono::seconds(1)));
  trellis->shutdown();
  return kExitOk;
}

int run_status(const GlobalOptions& global, const StatusArgs& args) {
  if (args.watch) return watch(global, args);
  auto trellis = Trellis::connect(handle_options(global));
  std::cout << render(*trellis, global, args, /*compact=*/false) << std::flush;
  trellis->shutdown();
  return kExitOk;
}

}  // namespace

Command add_status_command(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<StatusArgs>();
  auto* sub = app.add_subcommand("status", "status of all transforms or one, with hold-ups");
  sub->add_option("target", args->target, "[schema.]target (default: all)");
  sub->add_flag("--json", args->json,
                "print the status record(s) as JSON (an object for TARGET, else an array)");
  sub->add_flag("--watch", args->watch, "redraw every second until interrupted");
  return {sub, [&global, args] { return run_status(global, *args); }};
}

}  // namespace trellis::cli
