// Events as log lines; see event_log.hpp.
#include "base/event_log.hpp"

namespace trellis::base {

namespace {
thread_local const nlohmann::json* t_event = nullptr;
}  // namespace

void log_event(spdlog::level::level_enum level, std::string_view event, const std::string& target,
               nlohmann::json details, const std::string& message) {
  nlohmann::json fields = {
      {"event", std::string(event)}, {"target", target}, {"details", std::move(details)}};
  t_event = &fields;
  spdlog::log(level, "{}", message);
  t_event = nullptr;
}

const nlohmann::json* current_event() {
  return t_event;
}

}  // namespace trellis::base
