// The Trellis workers of a configuration run in a child process (this same
// executable, `trellis_bench worker ...`) so that their peak RSS and CPU time
// are measured apart from the load generators and the harness.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>

namespace trellis::bench {

struct WorkerUsage {
  double cpu_seconds = 0;   // user + system of the worker process
  int64_t peak_rss_kb = 0;  // VmHWM / ru_maxrss
};

class Worker {
 public:
  // Starts `trellis_bench worker` against `url`: the staging worker and
  // `drain_threads` drain threads, ticking every `tick`. Its log goes to `log_path`.
  static std::unique_ptr<Worker> spawn(const std::string& url, int drain_threads,
                                       std::chrono::milliseconds tick, const std::string& log_path);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  pid_t pid() const { return pid_; }
  // Live readings from /proc (zero once stopped).
  WorkerUsage usage() const;
  // SIGTERM, wait for a clean exit; returns the whole life's usage (wait4).
  WorkerUsage stop();

 private:
  explicit Worker(pid_t pid) : pid_(pid) {}
  pid_t pid_;
  WorkerUsage final_;
};

// CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat.
double process_cpu_seconds(pid_t pid);

// The child's side: `trellis_bench worker URL DRAIN_THREADS TICK_MS`. Runs the
// workers until SIGTERM, then shuts down. Returns the exit status.
int worker_main(int argc, char** argv);

}  // namespace trellis::bench
