// Runs one parsed scenario file against a fresh database: one Trellis handle
// (2 drain threads + staging) for the whole file, each record in order, then
// convergence and the oracle for every live transform. Failures are reported
// through gtest at the .test file's line.
#pragma once

#include <memory>
#include <string>

#include "pg/connection.hpp"
#include "support/scenario_file.hpp"
#include "trellis/trellis.hpp"

namespace trellis::test::scenario {

// What the runner needs from the test fixture (TrellisTest keeps these
// protected, so the gtest class adapts them).
class Host {
 public:
  virtual ~Host() = default;
  virtual std::string url() const = 0;
  // Runs SQL as the application, on the fixture's plain connection.
  virtual void sql(const std::string& statements) = 0;
  virtual pg::Result query(const std::string& statement) = 0;
  // "" when the target equals its definition run as a plain SELECT.
  virtual std::string oracle_diff(const std::string& target) = 0;
  virtual std::unique_ptr<Trellis> start(int drain_threads, bool staging) = 0;
};

class Runner {
 public:
  Runner(Host& host, File file);
  ~Runner();
  // Runs every record; stops at the first failure that leaves later records
  // meaningless (a failed statement, apply or wait) and skips the final check.
  void run();

 private:
  struct Abort {};

  void execute(const Record& r);
  void statement(const Record& r);
  void apply(const Record& r);
  void await_live(const Record& r);
  void await_status(const Record& r);
  void await_converged(const Record& r);
  void query(const Record& r);
  void oracle(const Record& r);
  void status(const Record& r);
  void concurrently(const Record& r);
  void start_workers(const Record& r, bool on);
  void final_check();

  // A mismatch worth reporting that does not invalidate later records.
  void soft_fail(const Record& r, const std::string& message);
  [[noreturn]] void hard_fail(const Record& r, const std::string& message);
  std::string status_word(const std::string& target);
  std::string describe_status(const std::string& target);

  Host& host_;
  File file_;
  std::unique_ptr<Trellis> handle_;
  bool workers_on_ = true;
};

}  // namespace trellis::test::scenario
