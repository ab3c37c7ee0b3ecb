// Two drain threads woken by one promotion claim at the same moment; the
// claim statement locks its candidate buckets (SKIP LOCKED) while it runs,
// so the second finds all of them locked and claims nothing. It must learn
// that ready buckets were there ("contended"), so that it tries again at
// once rather than sleeping until the next poll while the first thread
// drains the whole segment alone. The race is staged by holding the ready
// buckets' rows locked from another session, as a claim in flight does.
#include "apply/drainer.hpp"
#include "catalog/store.hpp"
#include "compile/transform_sql.hpp"
#include "support/harness.hpp"

namespace trellis::test {

class ClaimContention : public TrellisTest {};

TEST_F(ClaimContention, AClaimThatFindsReadyBucketsLockedSaysSoAndClaimsThemOnceFree) {
  auto staging = promote_an_undrained_update(500);
  ASSERT_TRUE(eventually([&] { return ready_buckets() > 1; }, std::chrono::seconds(30)));

  auto conn = pg::Connection::open(url_);
  for (const auto& ddl : compile::create_temp_tables_sql()) conn->exec(ddl);
  catalog::Store store("trellis");
  apply::Drainer drainer(store, {});

  // Another claim in flight: every ready bucket's row locked.
  auto other = pg::Connection::open(url_);
  other->exec("BEGIN");
  other->exec("SELECT 1 FROM trellis.buckets WHERE NOT done FOR UPDATE");
  EXPECT_FALSE(drainer.drain_one(*conn));
  EXPECT_TRUE(drainer.take_contended()) << "a claim that found ready buckets locked said nothing";
  EXPECT_FALSE(drainer.take_contended()) << "contended is reported once";
  other->exec("COMMIT");

  int claims = 0;
  while (drainer.drain_one(*conn)) ++claims;
  EXPECT_GT(claims, 0) << "the buckets were not claimed once free";
  EXPECT_FALSE(drainer.take_contended()) << "nothing ready is not contended";
  EXPECT_EQ(ready_buckets(), 0);
  await_converged(*staging);
  expect_oracle("dst");
}

}  // namespace trellis::test
