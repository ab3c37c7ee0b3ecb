// Claims of catalog rows by a backend (a drain thread's bucket, a build):
// a claim is the owner's pid and backend start, and a claim whose backend
// is gone (no longer in pg_stat_activity) may be taken at once, so a
// crashed process's work is picked up by the next claim.
#pragma once

#include <fmt/format.h>

#include <string>

namespace trellis::catalog {

// The (pid, backend_start) pair a claim records for this backend.
inline constexpr const char* kThisBackend =
    "pg_backend_pid(), (SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid())";

// The claim held by the backend (`pid`, `start`) is of a backend that is gone.
inline std::string owner_gone(const std::string& pid, const std::string& start) {
  return fmt::format(
      "NOT EXISTS (SELECT 1 FROM pg_stat_activity __a WHERE __a.pid = {} AND __a.backend_start = "
      "{})",
      pid, start);
}

}  // namespace trellis::catalog
