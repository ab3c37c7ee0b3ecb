// The binder's refusals; see refusal.hpp.
#include "bind/refusal.hpp"

#include "lang/tokens.hpp"

namespace trellis::bind {

void refuse(ErrorCode code, const std::string& message) {
  throw Error(code, message);
}

std::string where_at(const lang::TransformStmt& stmt, int offset) {
  return lang::line_col(stmt.text, static_cast<size_t>(offset));
}

}  // namespace trellis::bind
