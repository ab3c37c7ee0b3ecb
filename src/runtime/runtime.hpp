// The background workers of one handle (docs/architecture.md, module map: runtime/): the staging
// worker (one per instance, guarded by an advisory lock) and N drain threads. Each owns its
// connection, reconnects by itself after a lost connection or a server
// restart, and stops promptly on shutdown.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pg/connection.hpp"
#include "trellis/trellis.hpp"

namespace trellis {

class Runtime {
 public:
  explicit Runtime(const Options& options);
  ~Runtime();
  // Starts the requested workers. Throws Error(conflict) when staging was
  // asked for and another process runs this instance's staging worker.
  void start();
  void stop();

 private:
  void staging_loop();
  void drain_loop(int index);
  bool acquire_staging_lock();
  bool sleep_for(std::chrono::milliseconds d);  // false when stopping
  // The staging worker's wait for its next tick: `d`, or less when a drain
  // thread asks for a tick (request_tick). False when stopping.
  bool sleep_until_tick(std::chrono::milliseconds d);
  void request_tick();

  Options options_;
  std::atomic<bool> stopping_{false};
  bool tick_requested_ = false;  // under mutex_
  std::mutex mutex_;
  std::condition_variable wake_;
  std::unique_ptr<pg::Connection> staging_lock_;
  std::vector<std::thread> threads_;
};

// Registers the connection as a live worker of `kind` (drain | staging).
void register_worker(pg::Connection& conn, const std::string& schema, const std::string& kind);
// Removes registrations whose connection is gone (run when staging starts).
void forget_dead_workers(pg::Connection& conn, const std::string& schema);
// True when some connected process has a worker of `kind` registered.
bool has_live_worker(pg::Connection& conn, const std::string& schema, const std::string& kind);
// Live worker connections of the instance by kind (drain, staging).
std::map<std::string, int64_t> live_workers(pg::Connection& conn, const std::string& schema);

}  // namespace trellis
