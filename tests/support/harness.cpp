// Integration fixture; see harness.hpp.
#include "support/harness.hpp"

#include <fmt/format.h>

#include <thread>

#include "catalog/migrate.hpp"
#include "catalog/store.hpp"
#include "compile/oracle.hpp"

namespace trellis::test {

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

testkit::Cluster& shared_cluster() {
  static std::unique_ptr<testkit::Cluster> cluster = testkit::Cluster::start();
  return *cluster;
}

void TrellisTest::SetUp() {
  url_ = shared_cluster().create_database("t");
  app_ = pg::Connection::open(url_, {.search_path = "public"});
}

void TrellisTest::TearDown() {
  app_.reset();
}

Options TrellisTest::options(int drain_threads, bool staging) const {
  Options o;
  o.url = url_;
  o.staging = staging;
  o.drain_threads = drain_threads;
  o.tick = std::chrono::milliseconds(20);
  return o;
}

std::unique_ptr<Trellis> TrellisTest::start(int drain_threads, bool staging) {
  return Trellis::connect(options(drain_threads, staging));
}

void TrellisTest::ensure_login_role(const std::string& role) {
  sql(
      fmt::format("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{0}') THEN "
                  "CREATE ROLE {0} LOGIN; END IF; END $$",
                  role));
}

std::string TrellisTest::url_as(const std::string& role) const {
  std::string url = url_;
  auto at = url.find("user=postgres");
  if (at != std::string::npos) url.replace(at, std::string("user=postgres").size(), "user=" + role);
  return url;
}

void TrellisTest::sql(const std::string& statement) {
  app_->exec_script(statement);
}

pg::Result TrellisTest::query(const std::string& statement) {
  return app_->exec(statement);
}

void TrellisTest::await_status(Trellis& t, const std::string& target, const std::string& status,
                               std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    auto s = t.status(target);
    last = s ? s->status : "(none)";
    if (last == status) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL() << target << " did not reach " << status << " within " << timeout.count()
         << "s; last status " << last;
}

void TrellisTest::await_converged(Trellis& t, std::chrono::seconds timeout) {
  auto token = t.watermark_token();
  ASSERT_TRUE(t.await_converged(token, timeout))
      << "not converged within " << timeout.count() << "s";
}

int64_t TrellisTest::ready_buckets() {
  return query("SELECT count(*) FROM trellis.buckets WHERE NOT done").get_int(0, 0);
}

std::unique_ptr<Trellis> TrellisTest::promote_an_undrained_update(int rows) {
  sql("CREATE TABLE src (id int PRIMARY KEY, v int NOT NULL)");
  sql("INSERT INTO src SELECT g, g FROM generate_series(1, " + std::to_string(rows) + ") g");
  {
    auto t = start(2);
    t->apply("TRANSFORM dst FROM src SELECT v * 2 AS twice");
    await_status(*t, "dst", "live");
    await_converged(*t);
  }
  auto staging = start(0);  // seals and promotes segments; nothing drains them
  sql("UPDATE src SET v = v + 1");
  EXPECT_TRUE(eventually([&] { return ready_buckets() > 0; }, std::chrono::seconds(30)));
  return staging;
}

void TrellisTest::rerun_migration(int number) {
  std::string migration;
  for (const auto& [n, text] : catalog::embedded_migrations())
    if (n == number) migration = std::string(text);
  ASSERT_FALSE(migration.empty()) << "no migration " << number;
  for (size_t at; (at = migration.find("@schema@")) != std::string::npos;)
    migration.replace(at, 8, "\"trellis\"");
  sql(migration);
}

std::string TrellisTest::oracle_diff(const std::string& target) {
  return oracle_diff_at(url_, target);
}

std::string oracle_diff_at(const std::string& url, const std::string& target) {
  auto conn = pg::Connection::open(url);
  catalog::Store store("trellis");
  auto dot = target.find('.');
  std::string schema = dot == std::string::npos ? "public" : target.substr(0, dot);
  std::string table = dot == std::string::npos ? target : target.substr(dot + 1);
  auto def = store.transform(*conn, schema, table);
  if (!def) return "no transform " + target;
  auto diff = conn->exec(compile::oracle_diff_sql(*def, 20));
  std::string out;
  for (int i = 0; i < diff.rows(); ++i) out += diff.get(i, 0) + " " + diff.get(i, 1) + "\n";
  return out;
}

void TrellisTest::expect_oracle(const std::string& target) {
  EXPECT_EQ(oracle_diff(target), "") << "target " << target << " differs from its definition";
}

}  // namespace trellis::test
