// The drain page (docs/architecture.md, data path step 5). A claim is one bucket of a segment, or
// several of its small buckets at once. Per page, in one transaction: lock the claim, gather up to
// page_cap distinct keys past the bucket's cursor into the page table, re-derive every reader of
// those tables (each without the keys it holds in quarantine), advance the cursor (and mark the
// bucket done on the last page). Keys of a joined table are first mapped to the source keys
// they reach (compile/join_sql).
// A TRUNCATE sentinel adds every key the reader's target holds, so
// rows whose source rows vanished are removed. A reader whose build is writing its target by key
// ranges gets the page's keys parked instead (catalog parked_keys), re-derived by its build after
// the last range; of its source keys, those beyond the ranges handed out so far are left to the
// ranges that will read them. A page failing with a data error is redone to find
// the failing key, which is charged (apply/quarantine); one failing with a privilege error halts
// the transform behind it.
#include "apply/drainer.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/event_log.hpp"
#include "catalog/ring_geometry.hpp"
#include "compile/shared_sql.hpp"
#include "compile/transform_sql.hpp"
#include "pg/arrays.hpp"
#include "pg/sql_error.hpp"

namespace trellis::apply {

Drainer::Drainer(catalog::Store& store, DrainConfig config)
    : store_(store),
      config_(config),
      sql_(compile::compile_drain(store.schema())),
      failures_(catalog::Lifecycle(store).drain_failure_statements()),
      lifecycle_(store),
      quarantine_(store.schema()),
      metrics_(base::ProcessMetrics::of(store.schema())) {}

bool Drainer::drain_one(pg::Connection& conn) {
  auto claimed = conn.exec_prepared(
      sql_.claim_bucket, {std::to_string(config_.page_cap), std::to_string(config_.threads)});
  if (claimed.rows() == 0) return false;
  if (!claimed.get_opt(0, 0)) {
    contended_ = true;
    return false;
  }
  std::set<int> buckets;
  int64_t ring_rows = 0;
  for (int i = 0; i < claimed.rows(); ++i) {
    buckets.insert(static_cast<int>(claimed.get_int(i, 1)));
    ring_rows += claimed.get_opt(i, 2) ? claimed.get_int(i, 2) : config_.page_cap + 1;
  }
  Claim claim{claimed.get(0, 0), pg::int_array(buckets), claimed.rows(), ring_rows};
  std::string what = fmt::format("segment {} buckets {}", claim.seg, claim.buckets);
  for (;;) {
    try {
      while (!drain_page(conn, claim)) {
      }
      return true;
    } catch (const pg::SqlError& e) {
      if (!conn.healthy()) throw;
      spdlog::debug("drain of {} failed: {} ({})", what, e.what(), e.sqlstate());
      Quarantine::Refill refill = [&]() -> std::optional<std::vector<TransformWork>> {
        auto page = fill_page(conn, claim);
        if (!page) return std::nullopt;
        return page->work;
      };
      if (!quarantine_.halt_failure(conn, e, refill, what).empty())
        continue;  // the page goes on without the halted transforms
      auto charged = quarantine_.charge_failure(conn, e, refill, claim.seg, what);
      if (!charged) {
        record_failure(conn, claim, e.what(), e.sqlstate());
      } else if (charged->held) {
        continue;  // the page goes on without that key
      } else {     // retried shortly, and charged again if it still fails
        conn.exec(sql_.retry_bucket, {claim.seg, claim.buckets, std::to_string(charged->retry_ms)});
      }
      return true;
    }
  }
}

// The fill of a bucket larger than a page, under the planner settings that
// read the page index in order (drain_sql.hpp), in one round trip.
pg::Result Drainer::fill_in_index_order(pg::Connection& conn, const Statement& fill) const {
  std::vector<Statement> stmts;
  for (const auto& s : sql_.before_fill) stmts.push_back({s, {}});
  stmts.push_back(fill);
  for (const auto& s : sql_.after_fill) stmts.push_back({s, {}});
  return std::move(conn.pipeline(stmts).at(sql_.before_fill.size()));
}

// Fills the page inside the open transaction: nothing when the claim is lost.
std::optional<Drainer::Page> Drainer::fill_page(pg::Connection& conn, const Claim& claim) {
  int slot = catalog::ring_slot(std::stoll(claim.seg));
  auto held = conn.exec_prepared(sql_.check_bucket, {claim.seg, claim.buckets});
  if (held.rows() < claim.count) return std::nullopt;
  std::set<int> truncated;
  std::optional<std::string> cursor;  // the claim's buckets share it (drain_sql.hpp)
  for (int i = 0; i < held.rows(); ++i) {
    auto ids = pg::parse_int_array(held.get(i, 0));
    truncated.insert(ids.begin(), ids.end());
    if (!cursor) cursor = held.get_opt(i, 1);
  }
  const auto& fill_sql = claim.count == 1 ? sql_.fill_page[slot] : sql_.fill_pages[slot];
  // Only a bucket larger than a page is read in pages (and has a page index).
  bool in_pages = claim.count == 1 && claim.ring_rows > config_.page_cap;
  Statement fill_stmt{fill_sql, {claim.buckets, std::to_string(config_.page_cap), cursor}};
  pg::Result fill = in_pages ? fill_in_index_order(conn, fill_stmt)
                             : conn.exec(fill_stmt.first, fill_stmt.second);
  Page page;
  page.cursor = fill.get_opt(0, 1);
  page.keys = fill.get_int(0, 0);
  page.last = page.keys < config_.page_cap;
  page.tables = pg::parse_int_array(fill.get(0, 2));
  page.tables.insert(truncated.begin(), truncated.end());
  if (page.tables.empty()) return page;
  // Keys a TRUNCATE adds go in as whole keys for every transform, before
  // any mapping: a key is added once, so one a mapping added first would
  // stay reached only through that transform's joins (kWholeRootsTable),
  // and a transform over a truncated table that fans out would re-derive
  // only its pairs.
  std::vector<Statement> whole_keys, mapped_keys;
  for (const auto& d : store_.active_readers(conn, page.tables)) {
    page.feeds = page.feeds || d.feeds_downstream;
    const auto& sql = rederiver_.sql(d);
    auto ids = d.table_ids();
    if (std::any_of(ids.begin(), ids.end(), [&](int id) { return truncated.count(id) > 0; }))
      whole_keys.push_back({sql.page_all_held_keys, {}});
    if (std::any_of(d.joins.begin(), d.joins.end(),
                    [&](const catalog::JoinDef& j) { return truncated.count(j.table_id) > 0; }))
      whole_keys.push_back({sql.page_all_source_keys, {}});
    for (const auto& map : sql.map_joined_keys)
      if (page.tables.count(map.table_id)) mapped_keys.push_back({map.sql, {}});
    TransformWork w{d.id, d.target_name(), d.source_table_id, {}, std::nullopt};
    if (d.parks_changes) {  // its build re-derives the keys after its last range
      pg::Param fanning;
      if (d.fans_out()) fanning = pg::int_array(d.fanning_table_ids());
      w.steps.push_back(
          {park_for(d), {std::to_string(d.id), std::to_string(d.source_table_id), fanning}});
      page.work.push_back(std::move(w));
      continue;
    }
    for (const auto& step : sql.steps) w.steps.push_back({step, {}});
    if (d.shape == catalog::Shape::one_to_one) w.one_to_one = d;
    page.work.push_back(std::move(w));
  }
  std::vector<Statement> all_keys = std::move(whole_keys);
  all_keys.insert(all_keys.end(), mapped_keys.begin(), mapped_keys.end());
  if (all_keys.empty()) return page;
  int64_t added = 0;
  for (const auto& r : conn.pipeline(all_keys)) added += r.affected();
  if (added > compile::DrainSql::kAnalyzePageAbove) conn.exec(sql_.analyze_page);
  return page;
}

const std::string& Drainer::park_for(const catalog::TransformDef& def) {
  auto it = parks_.find(def.id);
  if (it == parks_.end() || it->second.first != def.version) {
    std::string park = lifecycle_.park_statement(compile::kPageTable, compile::kWholeRootsTable,
                                                 compile::page_key_slot(),
                                                 rederiver_.sql(def).page_key_beyond_frontier);
    it = parks_.insert_or_assign(def.id, std::make_pair(def.version, std::move(park))).first;
  }
  return it->second.second;
}

// Returns true when the claim is done.
bool Drainer::drain_page(pg::Connection& conn, const Claim& claim) {
  pg::Transaction txn(conn);
  auto page = fill_page(conn, claim);
  if (!page) return true;  // lost the claim
  std::vector<Statement> stmts;
  for (const auto& w : page->work) quarantine_.append_hidden(w.transform_id, w.steps, stmts);
  stmts.push_back({sql_.finish_page,
                   {claim.seg, claim.buckets, page->cursor, page->last ? "true" : "false",
                    page->feeds ? "true" : "false"}});
  auto results = conn.pipeline(stmts);
  txn.commit();
  fed_downstream_ = fed_downstream_ || page->feeds;
  if (auto age = results.back().get_opt(0, 0); age && !page->work.empty()) {
    for (const auto& w : page->work)
      metrics_.page_applied(w.target, static_cast<double>(page->keys), std::stod(*age));
  }
  if (!page->tables.empty()) {
    auto cleared = conn.exec(failures_.clear, {pg::int_array(page->tables)});
    for (int i = 0; i < cleared.rows(); ++i)
      base::log_event(spdlog::level::info, "drain_failure_cleared", cleared.get(i, 0),
                      nlohmann::json::object(),
                      fmt::format("transform {}: its drain goes through again", cleared.get(i, 0)));
  }
  return page->last;
}

void Drainer::record_failure(pg::Connection& conn, const Claim& claim, const std::string& error,
                             const std::string& sqlstate) {
  conn.exec(sql_.fail_bucket, {claim.seg, claim.buckets});
  metrics_.drain_page_failed();
  if (pg::classify_sqlstate(sqlstate) == pg::FailureClass::transient) return;  // charge nothing
  auto tables = conn.exec(sql_.bucket_tables, {claim.seg, claim.buckets});
  auto readers = conn.exec(failures_.record, {tables.get(0, 0), error, sqlstate});
  for (int i = 0; i < readers.rows(); ++i) {
    std::string target = readers.get(i, 0);
    std::string message =
        fmt::format("drain of {} fails: {} ({}); retried with backoff", target, error, sqlstate);
    if (readers.get_int(i, 1) > 1) {  // logged when it started
      spdlog::debug("{}", message);
      continue;
    }
    base::log_event(spdlog::level::warn, "drain_failure", target,
                    {{"error", error}, {"sqlstate", sqlstate}}, message);
  }
}

}  // namespace trellis::apply
