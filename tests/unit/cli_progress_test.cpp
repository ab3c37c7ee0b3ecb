// status --watch's rates (cli/progress_rate, cli/status_view): a build's
// rows per second and time left, a backlog draining or growing, a stall.
#include <gtest/gtest.h>

#include "api/records_json.hpp"
#include "cli/progress_rate.hpp"
#include "cli/status_view.hpp"

namespace trellis::cli {

using namespace std::chrono_literals;

TEST(ProgressRates, SmoothsTheRateAndGivesTheTimeLeft) {
  ProgressRates r;
  auto t0 = ProgressRates::Clock::now();
  EXPECT_FALSE(r.per_second("b").has_value());
  r.observe("b", 1000, t0);
  EXPECT_FALSE(r.per_second("b").has_value()) << "one sample gives no rate";
  r.observe("b", 3000, t0 + 1s);
  EXPECT_DOUBLE_EQ(*r.per_second("b"), 2000);
  r.observe("b", 3000, t0 + 2s);  // one still second halves it, not zeroes it
  EXPECT_DOUBLE_EQ(*r.per_second("b"), 1000);
  EXPECT_DOUBLE_EQ(r.peak("b"), 3000);
  EXPECT_EQ(eta(7000, 1000), "7 s");
  EXPECT_EQ(eta(65, 1), "1 min 05 s");
  EXPECT_EQ(eta(7800, 1), "2 h 10 min");
  EXPECT_EQ(eta(0, 0), "0 s");
  EXPECT_FALSE(eta(10, 0).has_value());
}

TEST(StatusView, BuildAndBacklogLinesShowRateAndTimeLeft) {
  Status s;
  s.target = "public.t";
  s.status = "backfilling";
  s.build_rows_done = 250;
  s.build_rows_estimate = 1000;
  EXPECT_EQ(build_progress(s), "250/1000 rows [#####...............] 25%");
  EXPECT_EQ(build_progress(s, 250.0),
            "250/1000 rows [#####...............] 25%, 250 rows/s, 3 s left");
  EXPECT_EQ(build_progress(s, 0.0), "250/1000 rows [#####...............] 25%, stalled");

  ProgressRates r;
  auto t0 = ProgressRates::Clock::now();
  r.observe("ring backlog", 10000, t0);
  r.observe("ring backlog", 6000, t0 + 1s);
  EXPECT_EQ(backlog_progress({6000, 2 * 1024 * 1024}, r),
            "ring backlog: 6000 keys, 2.0 MB [########............] 40% drained of the peak, "
            "-4000 keys/s, 2 s left");
  r.observe("ring backlog", 14000, t0 + 2s);  // growing again: no time left to give
  EXPECT_EQ(backlog_progress({14000, 0}, r),
            "ring backlog: 14000 keys, 0.0 MB [....................] 0% drained of the peak, "
            "2000 keys/s");
}

TEST(StatusView, EachPartitionBeingCorrectedForIsALineAndAJsonEntry) {
  Status s;
  s.target = "public.t";
  s.status = "backfilling";
  s.correcting = {{"public.ev_e", "attached", "2026-12-05 08:00:00+00"},
                  {"public.ev_a", "dropped", "2026-12-05 08:00:01+00"}};
  std::vector<std::string> lines;  // besides the build's progress line
  for (const auto& l : describe_status(s))
    if (l.rfind("correcting", 0) == 0) lines.push_back(l);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "correcting for partition public.ev_e (attached) since 2026-12-05 08:00:00+00: the "
            "keys it holds are re-derived; live again once they are");
  EXPECT_EQ(lines[1],
            "correcting for partition public.ev_a (dropped) since 2026-12-05 08:00:01+00: the "
            "keys it held are re-derived; live again once they are");
  auto j = api::status_json(s);
  ASSERT_EQ(j["correcting"].size(), 2u);
  EXPECT_EQ(j["correcting"][0]["partition"], "public.ev_e");
  EXPECT_EQ(j["correcting"][0]["reason"], "attached");
  EXPECT_EQ(j["correcting"][1]["since"], "2026-12-05 08:00:01+00");
}

}  // namespace trellis::cli
