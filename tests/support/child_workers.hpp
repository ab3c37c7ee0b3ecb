// Worker processes a test can kill: a forked child running drain threads
// until SIGKILL, a guard that kills it if the test ends early, and a wait for
// a Trellis backend blocked on a lock (so a kill lands inside a transaction).
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "compile/shared_sql.hpp"
#include "support/harness.hpp"

namespace trellis::test {

// Kills the forked worker process when a test ends early, so it never
// outlives the cluster.
struct ChildGuard {
  pid_t pid;
  ~ChildGuard() {
    if (pid > 0 && kill(pid, SIGKILL) == 0) waitpid(pid, nullptr, 0);
  }
  // SIGKILL now, and reap it.
  void kill_now() {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    pid = 0;
  }
};

// Forks a process that runs workers with `options` until it is killed. Call
// it before any thread exists in the test process.
inline pid_t fork_worker_process(const Options& options) {
  pid_t pid = fork();
  if (pid == 0) {
    try {
      auto handle = Trellis::connect(options);
      for (;;) pause();
    } catch (...) {
      _exit(3);
    }
  }
  return pid;
}

// Polls the database at `url` until some Trellis backend waits on a lock of
// `locktype` (any with "") inside a transaction; false on timeout.
inline bool await_trellis_lock_wait(const std::string& url, std::chrono::seconds timeout,
                                    const std::string& locktype = "") {
  auto conn = pg::Connection::open(url);
  std::string where = locktype.empty() ? "" : " AND l.locktype = '" + locktype + "'";
  return eventually(
      [&] {
        return conn->exec(
                       "SELECT count(*) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = "
                       "a.pid AND NOT l.granted WHERE a.application_name = 'trellis' AND "
                       "a.datname = current_database()" +
                       where)
                   .get_int(0, 0) > 0;
      },
      timeout);
}

// Polls until some Trellis backend waits on the advisory lock of a key slot
// (compile/shared_sql.hpp, lock_key_slots: kKeySlotLockTag is the high half
// of the lock's key); false on timeout.
inline bool await_key_slot_wait(const std::string& url, std::chrono::seconds timeout) {
  auto conn = pg::Connection::open(url);
  return eventually(
      [&] {
        return conn->exec(
                       "SELECT count(*) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid "
                       "AND NOT l.granted AND l.locktype = 'advisory' AND l.classid = " +
                       std::to_string(compile::kKeySlotLockTag) +
                       " AND l.objsubid = 1 WHERE a.application_name = 'trellis' AND a.datname "
                       "= current_database()")
                   .get_int(0, 0) > 0;
      },
      timeout);
}

}  // namespace trellis::test
