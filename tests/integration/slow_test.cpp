// The slow tier (ctest label "slow", part of `make test` at reduced size):
// a large build while writers keep going. TRELLIS_SLOW_ROWS scales it up.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#include "support/harness.hpp"

namespace trellis::test {

namespace {
int slow_rows() {
  const char* env = std::getenv("TRELLIS_SLOW_ROWS");
  return env ? std::atoi(env) : 100000;
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

// An aggregate build of the same source into few and into many groups while
// writers move rows between groups.
class SlowAggregate : public TrellisTest, public ::testing::WithParamInterface<int> {};

TEST_P(SlowAggregate, BuildIntoGroupsWhileWritersContinueMatchesOracle) {
  int rows = slow_rows();
  int groups = GetParam() == 0 ? 100 : std::max(1, rows / 10);
  sql("CREATE TABLE facts (id bigint PRIMARY KEY, grp int, amount numeric(12,2));"
      "INSERT INTO facts SELECT g, g % " +
      std::to_string(groups) + ", (g % 1000) / 7.0 FROM generate_series(1, " +
      std::to_string(rows) +
      ") g;"
      "CREATE INDEX ON facts (grp)");
  auto t = start(3);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    auto conn = pg::Connection::open(url_, {.search_path = "public"});
    for (int i = 0; !stop; ++i) {
      int id = 1 + (i * 7919) % rows;
      conn->exec_script(
          "UPDATE facts SET grp = grp + 1, amount = amount + 1 WHERE id = " + std::to_string(id) +
          "; DELETE FROM facts WHERE id = " + std::to_string(rows - i) +
          "; INSERT INTO facts VALUES (" + std::to_string(rows + 1 + i) + ", 3, 2.5)");
    }
  });
  t->apply(
      "TRANSFORM fact_totals FROM facts GROUP BY grp SELECT COUNT(*) AS n, "
      "SUM(amount) AS total, MAX(amount) AS top");
  await_status(*t, "fact_totals", "live", std::chrono::seconds(600));
  stop = true;
  writer.join();
  await_converged(*t, std::chrono::seconds(300));
  expect_oracle("fact_totals");
}

INSTANTIATE_TEST_SUITE_P(FewAndManyGroups, SlowAggregate, ::testing::Values(0, 1),
                         [](const auto& info) {
                           return info.param == 0 ? "groups_100" : "groups_rows_over_10";
                         });

}  // namespace trellis::test
