// Trellis::await_live: the wait that covers a transform's build, which a
// token (await_converged) does not. It returns once the transform is live
// and every change committed by then is in its target, refuses at once a
// transform that will not get there by waiting (paused), names an unknown
// target, and times out naming the status when nothing builds it.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "support/harness.hpp"

namespace trellis::test {

namespace {

// The error `call` throws (a test failure when it throws none).
template <typename F>
Error thrown_by(F&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected an error";
  return Error(ErrorCode::internal, "none thrown");
}

}  // namespace

class AwaitLive : public TrellisTest {
 protected:
  void SetUp() override {
    TrellisTest::SetUp();
    sql("CREATE TABLE src (id int PRIMARY KEY, v int); "
        "INSERT INTO src SELECT g, g FROM generate_series(1, 20000) g");
  }
};

TEST_F(AwaitLive, CoversTheBuildAndTheChangesCommittedBeforeTheCall) {
  using namespace std::chrono_literals;
  auto api = start(0, false);  // no workers yet: nothing builds
  api->apply("TRANSFORM src_view FROM src SELECT v * 2 AS w");

  // A token does not wait for a build: it converges over an empty target.
  EXPECT_TRUE(api->await_converged(api->watermark_token(), 10s));
  EXPECT_EQ(query("SELECT count(*) FROM src_view").get(0, 0), "0");
  // await_live does, and with nothing to build it says what the target is.
  auto timeout = thrown_by([&] { api->await_live("src_view", 300ms); });
  EXPECT_EQ(timeout.code(), ErrorCode::timeout);
  EXPECT_NE(std::string(timeout.what()).find("public.src_view is not live"), std::string::npos)
      << timeout.what();
  EXPECT_NE(std::string(timeout.what()).find("waiting_to_backfill"), std::string::npos)
      << timeout.what();

  auto workers = start(2, true);
  sql("UPDATE src SET v = v + 1 WHERE id % 3 = 0");  // during (or before) the build
  auto status = api->await_live("src_view", 60s);
  EXPECT_EQ(status.status, "live");
  EXPECT_EQ(status.target, "public.src_view");
  expect_oracle("src_view");

  // Live already: the call still waits for what was committed before it.
  sql("UPDATE src SET v = v + 7 WHERE id % 5 = 0");
  sql("DELETE FROM src WHERE id % 11 = 0");
  status = api->await_live("public.src_view", 60s);
  EXPECT_EQ(status.status, "live");
  expect_oracle("src_view");
}

TEST_F(AwaitLive, RefusesAPausedTransformAndNamesAnUnknownTarget) {
  using namespace std::chrono_literals;
  auto api = start(1, true);
  api->apply("TRANSFORM src_view FROM src SELECT v * 2 AS w");
  api->await_live("src_view", 60s);
  api->apply("PAUSE TRANSFORM src_view");
  auto start_at = std::chrono::steady_clock::now();
  auto paused = thrown_by([&] { api->await_live("src_view", 60s); });
  EXPECT_EQ(paused.code(), ErrorCode::conflict);
  EXPECT_NE(std::string(paused.what()).find("RESUME TRANSFORM public.src_view"), std::string::npos)
      << paused.what();
  EXPECT_LT(std::chrono::steady_clock::now() - start_at, 30s) << "refused, not timed out";

  auto unknown = thrown_by([&] { api->await_live("nowhere", 1s); });
  EXPECT_EQ(unknown.code(), ErrorCode::not_found);
  EXPECT_NE(std::string(unknown.what()).find("no transform has target nowhere"), std::string::npos)
      << unknown.what();

  api->apply("RESUME TRANSFORM src_view");
  EXPECT_EQ(api->await_live("src_view", 60s).status, "live");
  expect_oracle("src_view");
}

}  // namespace trellis::test
