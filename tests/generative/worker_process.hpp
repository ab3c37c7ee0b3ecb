// Trellis worker processes for the generative suite: this same executable
// re-executed in worker mode (a Trellis handle with the staging worker
// and/or drain threads, at a given tick, running until killed). Real
// processes, so a fault can kill -9 one in the middle of a page and a
// second one can join while others run.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace trellis::gen {

struct WorkerSpec {
  bool staging = false;
  int drain_threads = 1;
  int tick_ms = 20;              // seal cadence (matters for the staging worker)
  int build_range_rows = 50000;  // small: builds of many ranges
  std::string describe() const;
};

class WorkerFleet {
 public:
  WorkerFleet(std::string url, std::string log_path);
  ~WorkerFleet();  // kills every process still running
  WorkerFleet(const WorkerFleet&) = delete;
  WorkerFleet& operator=(const WorkerFleet&) = delete;

  void spawn(const WorkerSpec& spec);
  // SIGKILLs the index-th running worker and reaps it; returns its spec.
  WorkerSpec kill(size_t index);
  void kill_all();
  size_t size() const { return workers_.size(); }
  const WorkerSpec& spec(size_t index) const { return workers_[index].spec; }
  int drain_threads() const;
  bool has_staging() const;
  // Reaps workers that exited on their own (an error); describes them, ""
  // when none.
  std::string reap_exited();

 private:
  struct Worker {
    pid_t pid;
    WorkerSpec spec;
  };
  std::string url_;
  std::string log_path_;
  std::vector<Worker> workers_;
};

// Worker mode: argv = {exe, kWorkerFlag, url, staging(0|1), drains, tick_ms}.
// Connects (retrying while an old staging worker's session lingers) and
// blocks until killed.
inline constexpr const char* kWorkerFlag = "--generative-worker";
int worker_main(int argc, char** argv);

}  // namespace trellis::gen
