// Logging of the trellis command: spdlog to stderr, plain or JSON lines.
#pragma once

#include <string>

namespace trellis::cli {

// Sends every log line (the library's included) to stderr. With `json`, each
// line is one JSON object {"ts","level","instance","msg"}.
void setup_logging(bool json, bool verbose, const std::string& instance);

}  // namespace trellis::cli
