// How the binder refuses a definition: a trellis::Error with the code and a
// message that names the object, and where in the statement text the
// refused part is ("line:column"), for messages that point at it.
#pragma once

#include <string>

#include "lang/statement.hpp"
#include "trellis/error.hpp"

namespace trellis::bind {

[[noreturn]] void refuse(ErrorCode code, const std::string& message);
std::string where_at(const lang::TransformStmt& stmt, int offset);

}  // namespace trellis::bind
