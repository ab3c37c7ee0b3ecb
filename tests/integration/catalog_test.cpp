// Catalog migrations and instance identity: migrate is idempotent and safe
// to run concurrently, and a foreign or newer catalog is refused untouched.
#include <thread>

#include "catalog/migrate.hpp"
#include "support/harness.hpp"

namespace trellis::test {

class Catalog : public TrellisTest {};

TEST_F(Catalog, MigrateTwiceAndConcurrentlyLeavesOneInstance) {
  std::vector<std::thread> starters;
  for (int i = 0; i < 3; ++i)
    starters.emplace_back([&] {
      auto conn = pg::Connection::open(url_);
      catalog::migrate(*conn, "trellis");
    });
  for (auto& t : starters) t.join();
  auto conn = pg::Connection::open(url_);
  catalog::migrate(*conn, "trellis");
  auto row = query("SELECT schema_name, format_version FROM trellis.instance");
  ASSERT_EQ(row.rows(), 1);
  EXPECT_EQ(row.get(0, 0), "trellis");
  EXPECT_EQ(row.get_int(0, 1), catalog::latest_format_version());
}

TEST_F(Catalog, NewerFormatIsRefusedWithUpgradeHint) {
  auto conn = pg::Connection::open(url_);
  catalog::migrate(*conn, "trellis");
  sql("UPDATE trellis.instance SET format_version = 999");
  try {
    Trellis::connect(options(0, false));
    FAIL() << "connect accepted a newer catalog";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::conflict);
    EXPECT_NE(std::string(e.what()).find("upgrade Trellis"), std::string::npos) << e.what();
  }
  EXPECT_EQ(query("SELECT format_version FROM trellis.instance").get_int(0, 0), 999);
}

TEST_F(Catalog, SchemaHoldingOtherTablesIsRefused) {
  sql("CREATE SCHEMA app; CREATE TABLE app.users (id int)");
  auto o = options(0, false);
  o.schema = "app";
  try {
    Trellis::connect(o);
    FAIL() << "connect took over a schema with application tables";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::conflict);
    EXPECT_NE(std::string(e.what()).find("--schema"), std::string::npos) << e.what();
  }
  EXPECT_EQ(query("SELECT count(*) FROM pg_tables WHERE schemaname = 'app'").get_int(0, 0), 1);
}

TEST_F(Catalog, ForeignInstanceRowIsRefused) {
  auto conn = pg::Connection::open(url_);
  catalog::migrate(*conn, "trellis");
  sql("UPDATE trellis.instance SET schema_name = 'elsewhere'");
  EXPECT_THROW(Trellis::connect(options(0, false)), Error);
}

TEST_F(Catalog, TwoInstancesShareOneDatabase) {
  sql("CREATE TABLE src (id int PRIMARY KEY, v int); INSERT INTO src VALUES (1, 1), (2, 2)");
  auto a = start(1);
  auto ob = options(1, true);
  ob.schema = "trellis_b";
  auto b = Trellis::connect(ob);
  a->apply("TRANSFORM a_view FROM src SELECT v + 1 AS w");
  b->apply("TRANSFORM b_view FROM src SELECT v + 2 AS w");
  await_status(*a, "a_view", "live");
  await_status(*b, "b_view", "live");
  sql("UPDATE src SET v = 10 WHERE id = 1");
  await_converged(*a);
  ASSERT_TRUE(b->await_converged(b->watermark_token(), std::chrono::seconds(30)));
  expect_oracle("a_view");
  EXPECT_EQ(query("SELECT w FROM b_view WHERE id = 1").get_int(0, 0), 12);
}

}  // namespace trellis::test

namespace trellis::test {

TEST_F(Catalog, StagingStartForgetsWorkersWhoseConnectionIsGone) {
  auto conn = pg::Connection::open(url_);
  catalog::migrate(*conn, "trellis");
  sql("INSERT INTO trellis.workers (pid, backend_start, kind, host) "
      "VALUES (999999, now() - interval '1 day', 'drain', 'gone')");
  auto t = start(1);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (query("SELECT count(*) FROM trellis.workers WHERE pid = 999999").get_int(0, 0) > 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(query("SELECT count(*) FROM trellis.workers WHERE pid = 999999").get_int(0, 0), 0);
  while (!(t->has_live_drain_workers() && t->has_live_staging_worker()) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(t->has_live_drain_workers());
  EXPECT_TRUE(t->has_live_staging_worker());
}

}  // namespace trellis::test
