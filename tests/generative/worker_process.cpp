// Worker processes; see worker_process.hpp.
#include "generative/worker_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "trellis/trellis.hpp"

namespace trellis::gen {

std::string WorkerSpec::describe() const {
  return fmt::format("{}{} drain thread(s), tick {} ms, build ranges of {} rows",
                     staging ? "staging + " : "", drain_threads, tick_ms, build_range_rows);
}

WorkerFleet::WorkerFleet(std::string url, std::string log_path)
    : url_(std::move(url)), log_path_(std::move(log_path)) {}

WorkerFleet::~WorkerFleet() {
  kill_all();
}

void WorkerFleet::spawn(const WorkerSpec& spec) {
  // Everything the child needs is prepared before fork: between fork and
  // exec a threaded parent's child may only make async-signal-safe calls.
  std::vector<std::string> args = {"/proc/self/exe",
                                   kWorkerFlag,
                                   url_,
                                   spec.staging ? "1" : "0",
                                   std::to_string(spec.drain_threads),
                                   std::to_string(spec.tick_ms),
                                   std::to_string(spec.build_range_rows)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test process
    if (getppid() != parent) _exit(4);
    if (log >= 0) {
      dup2(log, STDOUT_FILENO);
      dup2(log, STDERR_FILENO);
    }
    execv(argv[0], argv.data());
    _exit(5);
  }
  if (log >= 0) close(log);
  workers_.push_back({pid, spec});
}

WorkerSpec WorkerFleet::kill(size_t index) {
  Worker w = workers_.at(index);
  ::kill(w.pid, SIGKILL);
  waitpid(w.pid, nullptr, 0);
  workers_.erase(workers_.begin() + static_cast<std::ptrdiff_t>(index));
  return w.spec;
}

void WorkerFleet::kill_all() {
  while (!workers_.empty()) kill(workers_.size() - 1);
}

int WorkerFleet::drain_threads() const {
  int n = 0;
  for (const auto& w : workers_) n += w.spec.drain_threads;
  return n;
}

bool WorkerFleet::has_staging() const {
  for (const auto& w : workers_)
    if (w.spec.staging) return true;
  return false;
}

std::string WorkerFleet::reap_exited() {
  std::string out;
  for (size_t i = 0; i < workers_.size();) {
    const Worker& w = workers_[i];
    int status = 0;
    if (waitpid(w.pid, &status, WNOHANG) != w.pid) {
      ++i;
      continue;
    }
    out += fmt::format("worker {} ({}) exited with status {}\n", w.pid, w.spec.describe(),
                       WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
    workers_.erase(workers_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return out;
}

int worker_main(int argc, char** argv) {
  if (argc != 7) return 2;
  Options o;
  o.url = argv[2];
  o.staging = std::string(argv[3]) == "1";
  o.drain_threads = std::atoi(argv[4]);
  o.tick = std::chrono::milliseconds(std::atoi(argv[5]));
  o.build_range_rows = std::atoi(argv[6]);
  // A killed staging worker's session (and its advisory lock) can outlive
  // the process for a moment, and the server may be restarting.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::unique_ptr<Trellis> handle;
  while (!handle) {
    try {
      handle = Trellis::connect(o);
    } catch (const std::exception& e) {
      if (std::chrono::steady_clock::now() > deadline) {
        fmt::print(stderr, "generative worker gave up: {}\n", e.what());
        return 3;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  for (;;) pause();
}

}  // namespace trellis::gen
