// The drain's page fill over a bucket read in many pages: whatever keys a
// bucket holds (repeated, sharing a first part, with an empty or NULL first
// part, of two tables), walking it page by page from its cursor reads every
// distinct key exactly once, puts each key without a NULL part in the page
// table, and ends. Run both ways a fill reads a bucket: through the slot's
// page index under the planner settings the drain takes for it, and by a
// scan and sort. Small pages (7 keys) make many of them.
#include <fmt/format.h>

#include <map>

#include "catalog/migrate.hpp"
#include "compile/drain_sql.hpp"
#include "compile/transform_sql.hpp"
#include "support/harness.hpp"

namespace trellis::test {

class PageFill : public TrellisTest {
 protected:
  void SetUp() override {
    TrellisTest::SetUp();
    conn_ = pg::Connection::open(url_);
    catalog::migrate(*conn_, "trellis");
    for (const auto& s : compile::create_temp_tables_sql()) conn_->exec(s);
    // Bucket 0 of slot 0: 60 single-part keys of table 1, each staged twice;
    // keys of table 2 that share a first part or whose first part is empty
    // or NULL; keys with a NULL part, which count but name no row.
    sql("INSERT INTO trellis.ring_0 (tbl, key, bucket, op) SELECT 1, ARRAY[g::text], 0, 'u' FROM "
        "generate_series(1, 60) g, generate_series(1, 2)");
    sql("INSERT INTO trellis.ring_0 (tbl, key, bucket, op) VALUES "
        "(2, ARRAY['k', '1'], 0, 'u'), (2, ARRAY['k', '2'], 0, 'u'), (2, ARRAY['k', '10'], 0, 'u'),"
        "(2, ARRAY['k'], 0, 'u'), (2, ARRAY['', 'a'], 0, 'u'), (2, ARRAY[''], 0, 'u'),"
        "(2, ARRAY[NULL, 'a'], 0, 'd'), (2, ARRAY[NULL], 0, 'd'), (2, ARRAY['k', NULL], 0, 'd'),"
        "(2, ARRAY['x y', 'é'], 0, 'u'), (2, NULL, 0, 't')");
  }

  // Walks bucket 0 page by page: per page, the keys the fill put in the page
  // table, counted per key; the number of keys the pages counted in all.
  std::pair<std::map<std::string, int>, int64_t> walk(bool by_index) {
    auto drain = compile::compile_drain("trellis");
    const std::string& fill = drain.fill_page[0];
    std::map<std::string, int> seen;
    int64_t counted = 0;
    std::optional<std::string> cursor;
    for (int page = 0; page < 100; ++page) {
      pg::Transaction txn(*conn_);
      std::vector<std::pair<std::string, std::vector<pg::Param>>> stmts;
      if (by_index)
        for (const auto& s : drain.before_fill) stmts.push_back({s, {}});
      stmts.push_back({fill, {"{0}", std::to_string(kCap), cursor}});
      auto results = conn_->pipeline(stmts);
      const auto& r = results.back();
      int64_t n = r.get_int(0, 0);
      counted += n;
      cursor = r.get_opt(0, 1);
      auto keys = conn_->exec("SELECT tbl || ':' || key::text FROM pg_temp.trellis_page");
      for (int i = 0; i < keys.rows(); ++i) ++seen[keys.get(i, 0)];
      for (const auto& s : drain.after_fill) conn_->exec(s);
      txn.commit();
      if (n < kCap) return {seen, counted};
    }
    ADD_FAILURE() << "the walk did not end";
    return {seen, counted};
  }

  static constexpr int kCap = 7;
  std::unique_ptr<pg::Connection> conn_;
};

void expect_every_key_once(const std::map<std::string, int>& seen, int64_t counted) {
  EXPECT_EQ(counted, 60 + 10) << "distinct keys counted by the pages";
  EXPECT_EQ(seen.size(), 60u + 7u) << "keys without a NULL part put in the page table";
  for (const auto& [key, times] : seen) EXPECT_EQ(times, 1) << key << " was read more than once";
  for (const char* key : {"1:{1}", "1:{60}", "2:{k,1}", "2:{k,10}", "2:{k}", "2:{\"\",a}",
                          "2:{\"\"}", "2:{\"x y\",é}"})
    EXPECT_EQ(seen.count(key), 1u) << key << " was never read";
  EXPECT_EQ(seen.count("2:{NULL,a}"), 0u) << "a key with a NULL part went into the page table";
}

TEST_F(PageFill, ABucketReadThroughItsPageIndexYieldsEveryKeyOnce) {
  sql(fmt::format("CREATE INDEX ring_0_page ON trellis.ring_0 (bucket, {}) WHERE {}",
                  compile::kRingPageOrder, compile::kRingHasKey));
  sql("ANALYZE trellis.ring_0");
  auto [seen, counted] = walk(true);
  expect_every_key_once(seen, counted);
}

TEST_F(PageFill, ABucketReadByAScanYieldsEveryKeyOnce) {
  auto [seen, counted] = walk(false);
  expect_every_key_once(seen, counted);
}

}  // namespace trellis::test
