// Integration tests for testkit::Cluster: the throwaway PostgreSQL every other
// integration test stands on must start, isolate databases, survive restarts
// and clean up after itself, including after a crashed owner.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "pg/connection.hpp"
#include "pg/sql_error.hpp"
#include "support/harness.hpp"
#include "testkit/cluster.hpp"

namespace trellis::testkit {
namespace {

namespace fs = std::filesystem;
using test::eventually;

bool process_gone(pid_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() &&
         (text[paren + 2] == 'Z' || text[paren + 2] == 'X');
}

std::string query_one(const std::string& url, const std::string& sql) {
  auto conn = pg::Connection::open(url);
  return conn->exec(sql).get(0, 0);
}

class ClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ClusterOptions options;
    options.extra_conf = "work_mem = '7MB'";
    cluster_holder_ = Cluster::start(options);
    cluster_ = cluster_holder_.get();
  }
  static void TearDownTestSuite() { cluster_holder_.reset(); }
  static inline std::unique_ptr<Cluster> cluster_holder_;
  static inline Cluster* cluster_ = nullptr;
};

TEST_F(ClusterTest, StartedServerIsPostgres15AcceptingConnections) {
  EXPECT_GT(cluster_->port(), 0);
  EXPECT_GT(cluster_->postmaster_pid(), 0);
  EXPECT_EQ(query_one(cluster_->url(), "SHOW server_version_num").substr(0, 2), "15");
}

TEST_F(ClusterTest, ServerUsesSpeedSettingsAndExtraConf) {
  EXPECT_EQ(query_one(cluster_->url(), "SHOW fsync"), "off");
  EXPECT_EQ(query_one(cluster_->url(), "SHOW max_connections"), "200");
  EXPECT_EQ(query_one(cluster_->url(), "SHOW work_mem"), "7MB");
  EXPECT_EQ(query_one(cluster_->url(), "SHOW server_encoding"), "UTF8");
}

TEST_F(ClusterTest, CreatedDatabasesAreDistinctAndIsolated) {
  std::string a = cluster_->create_database("iso");
  std::string b = cluster_->create_database("iso");
  ASSERT_NE(a, b);
  EXPECT_NE(query_one(a, "SELECT current_database()"), query_one(b, "SELECT current_database()"));
  pg::Connection::open(a)->exec("CREATE TABLE public.only_in_a (x int)");
  EXPECT_EQ(query_one(a, "SELECT count(*) FROM pg_class WHERE relname = 'only_in_a'"), "1");
  EXPECT_EQ(query_one(b, "SELECT count(*) FROM pg_class WHERE relname = 'only_in_a'"), "0");
}

TEST_F(ClusterTest, CreateDatabaseAcceptsAnyPrefix) {
  std::string url = cluster_->create_database("Weird Prefix-1");
  EXPECT_EQ(query_one(url, "SELECT current_database() LIKE 'weird_prefix_1_%'"), "t");
}

TEST_F(ClusterTest, LiveOwnersClusterIsNotReaped) {
  reap_stale_clusters();
  EXPECT_TRUE(fs::exists(cluster_->dir()));
  EXPECT_EQ(query_one(cluster_->url(), "SELECT 1"), "1");
}

void restart_with_client_connected(Cluster& cluster, bool immediate) {
  std::string url = cluster.create_database("restart");
  auto conn = pg::Connection::open(url);
  conn->exec("CREATE TABLE public.t (x int)");
  conn->exec("INSERT INTO public.t VALUES (1)");
  conn->exec("BEGIN");
  conn->exec("INSERT INTO public.t VALUES (2)");  // left uncommitted across the restart
  pid_t before = cluster.postmaster_pid();

  cluster.restart(immediate);

  EXPECT_NE(cluster.postmaster_pid(), before);
  EXPECT_THROW(conn->exec("SELECT 1"), pg::SqlError);
  EXPECT_EQ(query_one(url, "SELECT string_agg(x::text, ',') FROM public.t"), "1");
}

TEST_F(ClusterTest, FastRestartWithClientConnectedKeepsCommittedData) {
  restart_with_client_connected(*cluster_, false);
}

TEST_F(ClusterTest, ImmediateRestartWithClientConnectedRecoversCommittedData) {
  restart_with_client_connected(*cluster_, true);
}

TEST_F(ClusterTest, RestartAfterStopStartsTheServerAgain) {
  pid_t before = cluster_->postmaster_pid();
  cluster_->stop();
  EXPECT_EQ(cluster_->postmaster_pid(), 0);
  EXPECT_TRUE(eventually([&] { return process_gone(before); }));
  cluster_->restart();
  EXPECT_EQ(query_one(cluster_->url(), "SELECT 1"), "1");
}

TEST(ClusterLifetime, DestructionStopsServerAndRemovesDirectory) {
  auto cluster = Cluster::start();
  std::string dir = cluster->dir();
  pid_t pid = cluster->postmaster_pid();
  ASSERT_TRUE(fs::exists(dir + "/data/PG_VERSION"));
  ASSERT_GT(pid, 0);

  cluster.reset();

  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(eventually([&] { return process_gone(pid); }));
}

TEST(ClusterLifetime, KeptClusterSurvivesDestructionAndIsReusedWithItsData) {
  std::string base = fs::temp_directory_path() / ("trellis-keep-" + std::to_string(getpid()));
  ClusterOptions options;
  options.base_dir = base;
  options.keep = true;
  std::string db_url;
  int port = 0;
  {
    auto first = Cluster::start(options);
    port = first->port();
    db_url = first->create_database("kept");
    pg::Connection::open(db_url)->exec("CREATE TABLE public.survivor (x int)");
  }
  ASSERT_TRUE(fs::exists(base + "/data/PG_VERSION"));

  options.keep = false;  // the second owner discards it
  auto second = Cluster::start(options);
  EXPECT_EQ(second->port(), port);
  EXPECT_EQ(query_one(db_url, "SELECT count(*) FROM pg_class WHERE relname = 'survivor'"), "1");
  second.reset();
  EXPECT_FALSE(fs::exists(base));
}

// Child: start a cluster, report its dir and postmaster pid, die without cleanup.
[[noreturn]] void start_and_abandon(int report_fd) {
  std::string report;
  try {
    auto cluster = Cluster::start();
    report = cluster->dir() + "\n" + std::to_string(cluster->postmaster_pid()) + "\n";
    (void)cluster.release();
  } catch (const std::exception& e) {
    report = std::string("ERROR ") + e.what() + "\n";
  }
  [[maybe_unused]] auto n = write(report_fd, report.data(), report.size());
  _exit(0);
}

TEST(ClusterReaper, ClusterOfDeadOwnerIsStoppedAndDeleted) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    start_and_abandon(fds[1]);
  }
  close(fds[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) report.append(buf, n);
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_EQ(report.rfind("ERROR", 0), std::string::npos) << report;
  std::string dir = report.substr(0, report.find('\n'));
  pid_t postmaster = std::stoi(report.substr(report.find('\n') + 1));
  ASSERT_TRUE(fs::exists(dir));
  ASSERT_FALSE(process_gone(postmaster));

  reap_stale_clusters();

  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(eventually([&] { return process_gone(postmaster); }));
}

}  // namespace
}  // namespace trellis::testkit
