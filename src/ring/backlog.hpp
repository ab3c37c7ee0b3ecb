// How much the ring holds, for metrics (README, "Metrics"): segments by
// state, changed keys listed in buckets no drain has finished, and the
// bytes of the slot tables. One read of the registry, the buckets and the
// slots' sizes; it takes no lock a seal or a drain waits for.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "pg/connection.hpp"

namespace trellis::ring {

struct Backlog {
  std::map<std::string, int64_t> segments;  // state -> count
  int64_t rows = 0;                         // ring rows in buckets not yet done
  int64_t bytes = 0;                        // the slot tables' size, indexes included
};

Backlog read_backlog(pg::Connection& conn, const std::string& catalog_schema);

}  // namespace trellis::ring
