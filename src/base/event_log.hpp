// One log line per state change or failure (README, "Logs"): a transform
// going live, paused (with its cause), resumed or quarantined, a key held,
// capture installed, widened, waiting or failing, a drain failure. Each is
// logged with spdlog as a human sentence, and carries its event name, its
// target (schema.table, or "" when it concerns a table) and details, which
// the JSON log format (`--log-json`, cli/logging) writes as fields of the
// line beside the instance.
#pragma once

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace trellis::base {

// Logs `message` at `level` as event `event` of `target` with `details` (a
// JSON object).
void log_event(spdlog::level::level_enum level, std::string_view event, const std::string& target,
               nlohmann::json details, const std::string& message);

// The structured part ({"event", "target", "details"}) of the event being
// logged on this thread, null outside log_event: the formatter, which runs
// on the logging thread (the logger is synchronous), reads it.
const nlohmann::json* current_event();

}  // namespace trellis::base
