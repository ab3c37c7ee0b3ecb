// StopSignals: a sigwait thread that turns SIGINT/SIGTERM into a stop request.
#include "cli/signals.hpp"

#include <pthread.h>
#include <unistd.h>

namespace trellis::cli {

StopSignals::StopSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  waiter_ = std::thread([this] { watch(); });
}

// The signals stay blocked: the process is about to exit, and unblocking
// could deliver a late signal with its default (killing) action.
StopSignals::~StopSignals() {
  closing_ = true;
  pthread_kill(waiter_.native_handle(), SIGTERM);
  waiter_.join();
}

void StopSignals::watch() {
  for (;;) {
    int sig = 0;
    if (sigwait(&set_, &sig) != 0) continue;
    if (closing_) return;
    if (signal_.load() != 0) {
      const char msg[] = "trellis: second signal, exiting now without cleanup\n";
      [[maybe_unused]] auto n = write(2, msg, sizeof msg - 1);
      _exit(1);
    }
    {
      std::lock_guard lock(mutex_);
      signal_ = sig;
    }
    cv_.notify_all();
  }
}

std::string StopSignals::name() const {
  switch (signal_.load()) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case 0:
      return "";
    default:
      return "signal " + std::to_string(signal_.load());
  }
}

bool StopSignals::wait_for(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, timeout, [this] { return signal_.load() != 0; });
}

void StopSignals::wait() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return signal_.load() != 0; });
}

}  // namespace trellis::cli
