// SIGINT/SIGTERM as a stop request that commands wait on (no busy loops).
#pragma once

#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace trellis::cli {

// Blocks SIGINT and SIGTERM in the calling thread (and so in every thread it
// starts afterwards) and turns them into a stop request, seen by a dedicated
// sigwait thread. Create it on the main thread before starting any other
// thread. A second signal while stopping exits at once, without cleanup.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  bool requested() const { return signal_.load() != 0; }
  // The signal that asked to stop ("SIGINT", "SIGTERM"), "" when none yet.
  std::string name() const;
  // Waits until a stop request or `timeout`; true when stop was requested.
  bool wait_for(std::chrono::milliseconds timeout);
  void wait();

 private:
  void watch();

  sigset_t set_{};
  std::atomic<int> signal_{0};
  std::atomic<bool> closing_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
  std::thread waiter_;
};

}  // namespace trellis::cli
