// A segment whose small buckets need several pages is claimed in shares of
// about equal size, as many as a multiple of the drain threads, so that the
// threads finish it together (compile/drain_sql, claim_bucket): with two
// threads a 10,000-row segment of 16 buckets goes as four claims of four
// buckets, where the page cap alone gives 6, 6 and 4 buckets and leaves the
// last claim to one thread. The claims are taken from separate sessions, as
// separate threads take them.
#include "compile/drain_sql.hpp"
#include "compile/transform_sql.hpp"
#include "support/harness.hpp"

namespace trellis::test {

class ClaimShares : public TrellisTest {
 protected:
  // One 10,000-row UPDATE sealed and promoted as one segment, not drained.
  std::unique_ptr<Trellis> promote_one_segment_of_small_buckets() {
    auto staging = promote_an_undrained_update(10000);
    EXPECT_EQ(ready_buckets(), 16);
    return staging;
  }

  // The buckets each claim takes, one claim per session until none is left.
  std::vector<int64_t> claims_of(int threads) {
    auto claim = compile::compile_drain("trellis").claim_bucket;
    std::vector<int64_t> buckets;
    for (int i = 0; i < 16; ++i) {
      sessions_.push_back(pg::Connection::open(url_));
      auto r = sessions_.back()->exec(claim, {"4000", std::to_string(threads)});
      if (r.rows() == 0 || !r.get_opt(0, 0)) break;
      buckets.push_back(r.rows());
    }
    return buckets;
  }

  std::vector<std::unique_ptr<pg::Connection>> sessions_;  // owners of the claims
};

TEST_F(ClaimShares, TwoThreadsSplitASegmentOfThreePagesIntoFourEqualClaims) {
  auto staging = promote_one_segment_of_small_buckets();
  EXPECT_EQ(claims_of(2), (std::vector<int64_t>{4, 4, 4, 4}));
}

TEST_F(ClaimShares, OneThreadClaimsWhatThePageCapAllows) {
  auto staging = promote_one_segment_of_small_buckets();
  EXPECT_EQ(claims_of(1), (std::vector<int64_t>{6, 6, 4}));
}

}  // namespace trellis::test
