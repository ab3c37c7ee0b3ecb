// The drain page (DESIGN §4.3). Per page, in one transaction: lock the claim,
// gather up to page_cap distinct keys past the bucket's cursor into the page
// table, re-derive every reader of those tables, advance the cursor (and mark
// the bucket done on the last page). A TRUNCATE sentinel adds every key the
// reader's target holds, so rows whose source rows vanished are removed.
#include "apply/drainer.hpp"

#include <spdlog/spdlog.h>

#include "pg/arrays.hpp"
#include "pg/sql_error.hpp"

namespace trellis::apply {

Drainer::Drainer(catalog::Store& store, const ring::Ring& ring, DrainConfig config)
    : store_(store),
      ring_(ring),
      config_(config),
      sql_(compile::compile_drain(store.schema(), ring.config().slots)) {}

bool Drainer::drain_one(pg::Connection& conn) {
  auto claim = conn.exec(sql_.claim_bucket);
  if (claim.rows() == 0) return false;
  std::string seg = claim.get(0, 0), bucket = claim.get(0, 1);
  try {
    while (!drain_page(conn, seg, bucket)) {
    }
  } catch (const pg::SqlError& e) {
    if (!conn.healthy()) throw;
    spdlog::warn("drain of segment {} bucket {} failed: {} ({})", seg, bucket, e.what(),
                 e.sqlstate());
    record_failure(conn, seg, bucket, e.what(), e.sqlstate());
  }
  return true;
}

// Returns true when the bucket is done.
bool Drainer::drain_page(pg::Connection& conn, const std::string& seg, const std::string& bucket) {
  int slot = static_cast<int>(std::stoll(seg) % ring_.config().slots);
  pg::Transaction txn(conn);
  if (conn.exec(sql_.check_bucket, {seg, bucket}).rows() == 0) return true;  // lost the claim
  auto first =
      conn.pipeline({{sql_.truncated_tables[slot], {seg, bucket}},
                     {sql_.fill_page[slot], {seg, bucket, std::to_string(config_.page_cap)}}});
  std::set<int> truncated = pg::parse_int_array(first[0].get(0, 0));
  int64_t count = first[1].get_int(0, 0);
  auto cursor = first[1].get_opt(0, 1);
  std::set<int> tables = pg::parse_int_array(first[1].get(0, 2));
  bool last = count < config_.page_cap;

  std::vector<Statement> stmts;
  bool feeds = false;
  tables.insert(truncated.begin(), truncated.end());
  if (!tables.empty()) {
    auto readers = store_.active_readers(conn, tables);
    for (const auto& d : readers) {
      feeds = feeds || d.feeds_downstream;
      if (truncated.count(d.source_table_id))
        stmts.push_back({rederiver_.sql(d).page_all_held_keys, {}});
    }
    rederiver_.append(readers, stmts);
  }
  stmts.push_back(
      {sql_.finish_page, {seg, bucket, cursor, last ? "true" : "false", feeds ? "true" : "false"}});
  conn.pipeline(stmts);
  txn.commit();
  if (!tables.empty()) conn.exec(sql_.clear_drain_failure, {pg::int_array(tables)});
  return last;
}

void Drainer::record_failure(pg::Connection& conn, const std::string& seg,
                             const std::string& bucket, const std::string& error,
                             const std::string& sqlstate) {
  int slot = static_cast<int>(std::stoll(seg) % ring_.config().slots);
  conn.exec(sql_.fail_bucket, {seg, bucket});
  if (pg::classify_sqlstate(sqlstate) == pg::FailureClass::transient) return;  // charge nothing
  auto tables = conn.exec(sql_.bucket_tables[slot], {bucket});
  conn.exec(sql_.record_drain_failure, {tables.get(0, 0), error, sqlstate});
}

}  // namespace trellis::apply
