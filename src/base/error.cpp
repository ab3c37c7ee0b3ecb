// Names of trellis::ErrorCode values as they appear in messages and JSON.
#include "trellis/error.hpp"

namespace trellis {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::parse:
      return "parse";
    case ErrorCode::validation:
      return "validation";
    case ErrorCode::connectivity:
      return "connectivity";
    case ErrorCode::conflict:
      return "conflict";
    case ErrorCode::not_found:
      return "not_found";
    case ErrorCode::timeout:
      return "timeout";
    case ErrorCode::internal:
      return "internal";
  }
  return "internal";
}

}  // namespace trellis
