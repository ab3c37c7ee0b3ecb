// trellis::Error: the one exception type the library throws across its API.
// Every error carries a code callers can branch on and a message that names
// the object at fault and how to fix it.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace trellis {

enum class ErrorCode { parse, validation, connectivity, conflict, not_found, timeout, internal };

std::string_view to_string(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace trellis
