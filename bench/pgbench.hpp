// pgbench as the load generator: a custom script at a number of clients, for
// a duration, optionally at a fixed offered rate, in the background or not.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace trellis::bench {

struct PgbenchArgs {
  std::string script;  // pgbench script text
  int clients = 1;
  int seconds = 5;
  int rate = 0;  // offered transactions per second (--rate); 0: as fast as possible
};

struct PgbenchResult {
  double tps = 0;
  int64_t transactions = 0;
  double latency_ms = 0;  // average
  int64_t failed = 0;     // transactions that failed (deadlocks, serialization)
};

class Pgbench {
 public:
  // Starts pgbench against `url` (a libpq keyword string), writing its
  // script and output under `dir`.
  Pgbench(const std::string& url, const PgbenchArgs& args, const std::string& dir);
  ~Pgbench();
  Pgbench(const Pgbench&) = delete;
  Pgbench& operator=(const Pgbench&) = delete;
  // Waits for pgbench to end and parses its summary; throws if it failed.
  PgbenchResult finish();
  // Stops a run early (its summary is lost).
  void stop();

 private:
  pid_t pid_ = 0;
  std::string out_path_;
};

// Runs pgbench to the end.
PgbenchResult pgbench(const std::string& url, const PgbenchArgs& args, const std::string& dir);

}  // namespace trellis::bench
