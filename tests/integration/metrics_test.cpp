// Metrics (api/metrics.cpp): what metrics_text() and the HTTP endpoint say
// follows what happened — keys applied and their latency per transform,
// changes captured, statuses, pauses by cause, held keys, the ring, live
// workers — every series labelled with the Trellis instance.
#include "support/harness.hpp"
#include "support/http_get.hpp"

namespace trellis::test {

using namespace std::chrono_literals;

class Metrics : public TrellisTest {};

TEST_F(Metrics, FollowWhatTheWorkersDidAndWhatTheCatalogSays) {
  sql("CREATE TABLE m_src (id int PRIMARY KEY, g int NOT NULL, v int); CREATE INDEX ON m_src (g); "
      "INSERT INTO m_src SELECT x, x % 4, x FROM generate_series(1, 100) x");
  auto o = options(2, true);
  o.metrics_address = "127.0.0.1:0";
  auto t = Trellis::connect(o);
  ASSERT_GT(t->metrics_port(), 0);
  t->apply("TRANSFORM m_view FROM m_src SELECT v + v AS twice");
  t->apply("TRANSFORM m_sum FROM m_src GROUP BY g SELECT SUM(v) AS s");
  await_status(*t, "m_view", "live");
  await_status(*t, "m_sum", "live");
  sql("UPDATE m_src SET v = v + 1 WHERE id <= 30; UPDATE m_src SET v = 2000000000 WHERE id = 50");
  // The overflowing key is held (so no token converges): wait for that, and
  // for the page that goes on without it. The 31 changed keys were captured
  // and re-derived by each reader (the held one too, in the pages that
  // failed before it was held, so at least).
  const std::string inst = "trellis_instance=\"trellis\"";
  const std::string view = "target=\"public.m_view\"";
  ASSERT_TRUE(eventually(
      [&] {
        auto s = t->status("m_view");
        return s && s->held_keys && s->held_keys->count == 1 &&
               sample(t->metrics_text(), "trellis_keys_applied_total", {inst, view}).value_or(0) >=
                   30;
      },
      30s))
      << t->metrics_text();
  t->apply("PAUSE TRANSFORM m_sum");

  std::string text = t->metrics_text();
  EXPECT_EQ(sample(text, "trellis_transform_status", {inst, view, "status=\"live\""}), 1) << text;
  EXPECT_EQ(sample(text, "trellis_transform_status", {inst, view, "status=\"paused\""}), 0);
  EXPECT_EQ(sample(text, "trellis_transform_status",
                   {inst, "target=\"public.m_sum\"", "status=\"paused\""}),
            1);
  EXPECT_EQ(sample(text, "trellis_transforms_paused", {inst, "cause=\"operator\""}), 1);
  EXPECT_EQ(sample(text, "trellis_transforms_paused", {inst, "cause=\"halt\""}), 0);
  EXPECT_EQ(sample(text, "trellis_held_keys", {inst, view}), 1);
  EXPECT_EQ(sample(text, "trellis_drain_failing", {inst, view}), 0);
  EXPECT_EQ(sample(text, "trellis_workers", {inst, "kind=\"drain\""}), 2);
  EXPECT_EQ(sample(text, "trellis_workers", {inst, "kind=\"staging\""}), 1);
  EXPECT_EQ(sample(text, "trellis_ring_segments", {inst, "state=\"active\""}), 1);
  EXPECT_TRUE(sample(text, "trellis_ring_backlog_rows", {inst}).has_value());
  EXPECT_GT(sample(text, "trellis_ring_bytes", {inst}).value_or(0), 0);
  EXPECT_GE(sample(text, "trellis_changes_captured_total", {inst}).value_or(0), 31);
  EXPECT_GE(sample(text, "trellis_apply_latency_seconds_count", {inst, view}).value_or(0), 1);
  EXPECT_TRUE(sample(text, "trellis_apply_latency_seconds_bucket", {inst, view, "le=\"+Inf\""})
                  .has_value());
  EXPECT_EQ(sample(text, "trellis_catalog_up", {inst}), 1);

  // The same over HTTP, as Prometheus scrapes it.
  auto scraped = http_get("127.0.0.1", t->metrics_port(), "/metrics");
  ASSERT_EQ(scraped.status, 200) << scraped.headers;
  EXPECT_NE(scraped.headers.find("text/plain"), std::string::npos) << scraped.headers;
  EXPECT_EQ(sample(scraped.body, "trellis_held_keys", {inst, view}), 1) << scraped.body;
  EXPECT_NE(scraped.body.find("# TYPE trellis_apply_latency_seconds histogram"), std::string::npos);
  EXPECT_NE(scraped.body.find("# TYPE trellis_keys_applied_total counter"), std::string::npos);
  int port = t->metrics_port();
  t->shutdown();
  EXPECT_EQ(http_get("127.0.0.1", port, "/metrics").status, 0) << "stopped with the handle";
}

TEST_F(Metrics, AnAddressInUseIsRefusedNamingIt) {
  auto o = options(0, false);
  o.metrics_address = "127.0.0.1:0";
  auto first = Trellis::connect(o);
  o.metrics_address = "127.0.0.1:" + std::to_string(first->metrics_port());
  try {
    Trellis::connect(o);
    FAIL() << "a second endpoint on the same port was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::validation);
    EXPECT_NE(std::string(e.what()).find(o.metrics_address), std::string::npos) << e.what();
  }
}

}  // namespace trellis::test
