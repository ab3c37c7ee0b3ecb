// Shared fixture for integration tests: one throwaway PostgreSQL cluster per
// test binary, a fresh database per test, handles with workers, waits that
// poll with a deadline (never a fixed sleep), and the oracle check.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "pg/connection.hpp"
#include "testkit/cluster.hpp"
#include "trellis/trellis.hpp"

namespace trellis::test {

testkit::Cluster& shared_cluster();

// Polls `condition` every 20 ms until it holds (true) or `timeout` passes
// (false).
bool eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds timeout = std::chrono::seconds(10));

// Differences between `target` of the database at `url` (instance
// "trellis") and its definition run there as a plain SELECT ("" when equal).
std::string oracle_diff_at(const std::string& url, const std::string& target);

class TrellisTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  Options options(int drain_threads = 2, bool staging = true) const;
  std::unique_ptr<Trellis> start(int drain_threads = 2, bool staging = true);
  // Runs SQL as the application would (a plain connection, no Trellis pins).
  void sql(const std::string& statement);
  pg::Result query(const std::string& statement);
  // Polls status until `target` reads `status`; fails the test on timeout.
  void await_status(Trellis& t, const std::string& target, const std::string& status,
                    std::chrono::seconds timeout = std::chrono::seconds(60));
  void await_converged(Trellis& t, std::chrono::seconds timeout = std::chrono::seconds(60));
  // Differences between the target and its definition as a plain SELECT
  // ("" when equal), via the catalog's stored definition.
  std::string oracle_diff(const std::string& target);
  void expect_oracle(const std::string& target);
  // Ring buckets promoted and not yet drained (to stage changes in separate
  // segments while no drain runs).
  int64_t ready_buckets();
  // A table src(id, v) of `rows` rows read by a live 1-1 transform dst, then
  // one UPDATE of every row, sealed and promoted by the staging-only
  // instance returned; nothing drains it.
  std::unique_ptr<Trellis> promote_an_undrained_update(int rows);
  // Runs catalog migration `number` again by hand on the "trellis" catalog,
  // as it runs on a catalog an earlier version left (whose state a test has
  // made by hand).
  void rerun_migration(int number);
  // A login role of the cluster (created when missing; roles outlive the
  // test's database), and the test database's conninfo logged in as it.
  void ensure_login_role(const std::string& role);
  std::string url_as(const std::string& role) const;

  std::string url_;
  std::unique_ptr<pg::Connection> app_;
};

}  // namespace trellis::test
