// spdlog setup: a stderr sink, and a formatter that writes proper JSON lines.
#include "cli/logging.hpp"

#include <fmt/chrono.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "base/event_log.hpp"

namespace trellis::cli {

namespace {

class JsonFormatter : public spdlog::formatter {
 public:
  explicit JsonFormatter(std::string instance) : instance_(std::move(instance)) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(msg.time.time_since_epoch());
    std::time_t secs = static_cast<std::time_t>(ms.count() / 1000);
    std::tm utc{};
    gmtime_r(&secs, &utc);
    nlohmann::ordered_json line;
    line["ts"] = fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z", utc, ms.count() % 1000);
    line["level"] = std::string(spdlog::level::to_string_view(msg.level).data(),
                                spdlog::level::to_string_view(msg.level).size());
    line["instance"] = instance_;
    line["msg"] = std::string(msg.payload.data(), msg.payload.size());
    if (const auto* event = base::current_event())  // a state change or failure
      for (const auto& [key, value] : event->items()) line[key] = value;
    auto text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    dest.append(text.data(), text.data() + text.size());
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>(instance_);
  }

 private:
  std::string instance_;
};

}  // namespace

void setup_logging(bool json, bool verbose, const std::string& instance) {
  auto logger = spdlog::stderr_color_mt("trellis");
  if (json)
    logger->set_formatter(std::make_unique<JsonFormatter>(instance));
  else
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ [" + instance + "] %v");
  logger->set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

}  // namespace trellis::cli
