// The slow tier (ctest label "slow", part of `make test` at reduced size):
// a large build while writers keep going. TRELLIS_SLOW_ROWS scales it up.
#include <atomic>
#include <cstdlib>
#include <thread>

#include "support/harness.hpp"

namespace trellis::test {

namespace {
int slow_rows() {
  const char* env = std::getenv("TRELLIS_SLOW_ROWS");
  return env ? std::atoi(env) : 200000;
}
}  // namespace

class Slow : public TrellisTest {};

TEST_F(Slow, LargeBuildWhileWritersContinueMatchesOracle) {
  int rows = slow_rows();
  sql("CREATE TABLE big (id bigint PRIMARY KEY, grp int, amount numeric(12,2), note text);"
      "INSERT INTO big SELECT g, g % 97, (g % 1000) / 7.0, md5(g::text) FROM generate_series(1, " +
      std::to_string(rows) + ") g");
  auto t = start(3);
  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  std::thread writer([&] {
    auto conn = pg::Connection::open(url_, {.search_path = "public"});
    for (int i = 0; !stop; ++i) {
      int id = 1 + (i * 7919) % rows;
      conn->exec_script("UPDATE big SET amount = amount + 1 WHERE id = " + std::to_string(id) +
                        "; DELETE FROM big WHERE id = " + std::to_string(rows - i) +
                        "; INSERT INTO big VALUES (" + std::to_string(rows + 1 + i) +
                        ", 1, 2.5, 'new')");
      ++writes;
    }
  });
  t->apply(
      "TRANSFORM big_view FROM big SELECT amount * 2 AS twice, left(note, 8) AS tag, "
      "CASE WHEN grp < 10 THEN 'low' ELSE 'high' END AS band WHERE amount > 1");
  await_status(*t, "big_view", "live", std::chrono::seconds(300));
  stop = true;
  writer.join();
  await_converged(*t, std::chrono::seconds(120));
  expect_oracle("big_view");
  EXPECT_GT(writes.load(), 0);
}

}  // namespace trellis::test
