// Puts one table's capture functions and triggers in place, inside the
// caller's transaction (which runs under the 50 ms lock timeout, I6). Shared
// by the install on a captured table and on each of its partitions.
#pragma once

#include <string>

#include "compile/capture.hpp"
#include "pg/connection.hpp"

namespace trellis::capture {

// Locks `qualified` alone (ONLY: a partitioned table's partitions get their
// own installs), so no writer is in flight with the old triggers once it
// is held; then replaces the functions, and creates the triggers unless
// all four are there and enabled ALWAYS.
void put_capture(pg::Connection& conn, const std::string& qualified,
                 const compile::CaptureSql& sql);

}  // namespace trellis::capture
