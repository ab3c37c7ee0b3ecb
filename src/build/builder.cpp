// One build step of the transform this connection claims. The ranges phase
// writes (cursor, upper] of the source (an aggregate's ledger entries) in one
// set-based statement (an INSERT into a fresh table, or an upsert of what
// differs plus a delete of what is gone when rebuilding over rows readers
// use); an aggregate's group_ranges phase then writes the groups the same
// way, one GROUP BY over a range of the ledger's group index each (or, for
// a fresh state-only aggregate with few groups, folds ranges of the
// ledger's heap blocks into the groups); meanwhile drains park the
// transform's keys. An aggregate's ledger has no index until its ranges
// end, and a state-only one no group index unless a build reads by group
// (ensure_ledger_indexes). The parked phase moves parked keys into
// the page and re-derives them with the drain's statements; when none are
// left the transform goes live. Every phase starts behind a fence:
// no worker transaction that read the phase before may still be open
// (docs/architecture.md, "Building by ranges"). Every other step is a keyset
// chunk: find the chunk's upper key, gather the keys in (cursor, upper] into
// the page table, lock and re-derive them (without the keys the transform
// holds in quarantine), advance the cursor. A chunk failing with a data
// error is redone to find the failing key, which is charged
// (apply/quarantine) instead of reported as a backfill failure; one failing
// with a privilege error halts the transform.
#include "build/builder.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "base/event_log.hpp"
#include "catalog/range_claims.hpp"
#include "catalog/transitions.hpp"
#include "compile/one_to_one.hpp"
#include "compile/shared_sql.hpp"
#include "compile/transform_sql.hpp"
#include "pg/arrays.hpp"
#include "pg/sql_error.hpp"

namespace trellis::build {

namespace {

// A cursor of a group_ranges phase that folds by heap blocks: {ctid,BLOCK}.
// (A group range's cursor is one encoded group, a JSON array in quotes.)
bool is_fold_cursor(const std::string& cursor) {
  return cursor.rfind("{ctid,", 0) == 0;
}

// A group phase may fold when the target is empty and the ledger holds at
// most kFoldMaxGroups groups (the walk of group_chunk_bound, one index
// descent per group, finds no group past them; a fresh build's ledger,
// which has no group index yet, counts the groups of a sample instead).
bool few_groups_into_empty_target(pg::Connection& conn, const compile::TransformSql& sql) {
  if (!conn.exec(sql.group_fold_check).get_bool(0, 0)) return false;
  if (conn.exec(sql.ledger.group_indexes_missing).get_bool(0, 0))  // a fresh build's ledger
    return conn.exec(sql.group_fold_sample).get_int(0, 0) <= compile::kFoldMaxGroups;
  return conn.exec(sql.group_chunk_bound,
                   {std::nullopt, std::to_string(compile::kFoldMaxGroups + 1)})
             .rows() == 0;
}

// What a path reads the ledger by: what its drain reads (the key, and the
// group indexes unless the definition is state-only), the group indexes
// (group ranges), or both (keyset chunks, whose group phases walk the group
// index and whose keys the drain re-derives).
enum class LedgerReads { drain, groups, drain_and_groups };

// An aggregate's ledger has no index from its define until its fresh
// build creates them (TransformSql::LedgerIndexes). Those `reads` needs
// that are missing are created here, in the caller's transaction, under the
// ledger's lock (which waits for an index another thread is creating).
void create_missing_ledger_indexes(pg::Connection& conn, const compile::TransformSql& sql,
                                   LedgerReads reads) {
  const auto& ledger = sql.ledger;
  bool groups = reads != LedgerReads::drain || ledger.drain_reads_groups;
  bool key = reads != LedgerReads::groups;
  if (groups && conn.exec(ledger.group_indexes_missing).get_bool(0, 0))
    for (const auto& ddl : ledger.group_indexes) conn.exec(ddl);
  if (key && conn.exec(ledger.key_missing).get_bool(0, 0)) conn.exec(ledger.key_index);
}

// Before anything that reads the ledger by its indexes or upserts into it.
void ensure_ledger_indexes(pg::Connection& conn, const compile::TransformSql& sql,
                           LedgerReads reads = LedgerReads::drain) {
  const auto& ledger = sql.ledger;
  if (ledger.key_index.empty()) return;
  bool missing = reads != LedgerReads::groups && conn.exec(ledger.drain_missing).get_bool(0, 0);
  if (!missing && reads != LedgerReads::drain)
    missing = conn.exec(ledger.group_indexes_missing).get_bool(0, 0);
  if (!missing) return;
  conn.exec(ledger.lock);
  create_missing_ledger_indexes(conn, sql, reads);
}

// While the groups are written, a thread about to run a group range (or
// finding every group range claimed) first takes one missing index the
// drain reads (the group indexes, or the key) that no other thread has
// taken, and creates it in a transaction of its own: the two are created
// at once on two threads, beside the other threads' ranges (which only
// read the ledger, under a lock CREATE INDEX does not wait for). The
// phase's end creates what no thread has. True when this thread created
// one.
bool create_a_ledger_index_beside_group_ranges(pg::Connection& conn,
                                               const compile::TransformSql& sql) {
  const auto& ledger = sql.ledger;
  if (ledger.key_index.empty() || !conn.exec(ledger.drain_missing).get_bool(0, 0)) return false;
  struct Task {
    bool needed;
    const std::string& claim;
    const std::string& missing;
    std::vector<std::string> ddl;
  };
  const Task tasks[] = {{ledger.drain_reads_groups, ledger.claim_group_indexes,
                         ledger.group_indexes_missing, ledger.group_indexes},
                        {true, ledger.claim_key_index, ledger.key_missing, {ledger.key_index}}};
  for (const auto& task : tasks) {
    if (!task.needed) continue;
    try {
      pg::Transaction txn(conn);
      if (!conn.exec(task.claim).get_bool(0, 0)) continue;    // another thread creates it
      if (!conn.exec(task.missing).get_bool(0, 0)) continue;  // created meanwhile
      for (const auto& ddl : task.ddl) conn.exec(ddl);
      txn.commit();
      return true;
    } catch (const pg::SqlError& e) {
      if (!conn.healthy()) throw;
      // Met again, and reported, where the phase ends.
      spdlog::warn("creating {} failed: {}", task.ddl.front(), e.what());
      return false;
    }
  }
  return false;
}

// A group_ranges phase (not one that folds) splits its ledger into a part
// per drain thread, each read by its heap, when its entries (the rows the
// source ranges wrote) are few enough: compile::kSplitLedgerMaxRanges
// ranges' worth, or kSplitIndexedLedgerMaxRanges when the drain reads the
// ledger by group (its group index is created anyway, and group ranges
// read it).
bool ledger_is_split_into_parts(const compile::TransformSql& sql, int64_t rows_built,
                                int range_rows) {
  int ranges = sql.ledger.drain_reads_groups ? compile::kSplitIndexedLedgerMaxRanges
                                             : compile::kSplitLedgerMaxRanges;
  return rows_built <= int64_t{ranges} * range_rows;
}

// A group range with no bound at either end: the whole ledger (a split
// into one part, or a claim taken over from an earlier build).
bool is_whole_group_range(const pg::Param& lo, const pg::Param& hi) {
  return !lo && !hi;
}

// A rewrite range upserts into the ledger, by its key: the indexes a fresh
// build that was interrupted left uncreated are created first, in a
// transaction of their own (the range's would hold the ledger's lock
// against the other threads' ranges until it ends).
void index_ledger_before_a_rewrite(pg::Connection& conn, const compile::TransformSql& sql,
                                   const std::string& range_check,
                                   const std::vector<pg::Param>& check) {
  if (sql.ledger.key_index.empty() || !conn.exec(sql.ledger.drain_missing).get_bool(0, 0)) return;
  pg::Transaction txn(conn);
  auto state = conn.exec(range_check, check);
  if (state.rows() == 0 || !state.get_bool(0, 0)) return;  // moved on, or a fresh build
  ensure_ledger_indexes(conn, sql);
  txn.commit();
}

// The event of a build failure recorded as the transform's
// backfill_failure (retried with backoff).
void log_build_failure(const catalog::TransformDef& def, const nlohmann::json& failure) {
  base::log_event(
      spdlog::level::warn, "build_failure", def.target_name(), failure,
      fmt::format("build of {} failed at {}: {}; retried with backoff", def.target_name(),
                  failure.at("chunk").get<std::string>(), failure.at("error").get<std::string>()));
}

}  // namespace

// Reported as a chunk's failure is, and retried after the same wait.
void Builder::report_ledger_index_failure(pg::Connection& conn, const catalog::TransformDef& def,
                                          const LedgerIndexFailure& f) {
  nlohmann::json failure = {{"chunk", "the ledger's indexes, " + f.when},
                            {"error", f.error.what()},
                            {"sqlstate", f.error.sqlstate()}};
  conn.exec(sql_.fail, {std::to_string(def.id), failure.dump()});
  log_build_failure(def, failure);
}

Builder::Builder(catalog::Store& store, BuildConfig config)
    : store_(store),
      config_(config),
      sql_(catalog::Lifecycle(store).build_statements(compile::kPageTable)),
      ranges_(catalog::range_claim_statements(store)),
      quarantine_(store.schema()) {}

bool Builder::build_one_chunk(pg::Connection& conn) {
  auto claim = conn.exec_prepared(sql_.claim);
  // A claim for chunks left unused now stays this backend's until its next step.
  if (build_a_range(conn, pg::parse_int_array(claim.get(0, 4)))) return true;
  if (!claim.get_opt(0, 0)) return false;
  int id = static_cast<int>(claim.get_int(0, 0));
  auto found = store_.transform_by_id(conn, id);
  if (!found) return true;
  const auto& def = *found;
  using catalog::BuildPhase;
  auto phase = claim.get_opt(0, 1) ? catalog::phase_named(claim.get(0, 1)) : BuildPhase::source;
  // A phase by ranges comes here only once turned over to keyset chunks
  // (its fence passed before).
  try {
    if (phase == BuildPhase::parked) {
      if (!fence_passed(conn, id)) return true;
      // By slots, as every other thread; the chunk takes what is left once
      // every slot is done or taken.
      if (discharge_by_slots(conn, def) == Discharge::done) return true;
    }
    run_chunk(conn, def);
  } catch (const pg::SqlError& e) {
    if (!conn.healthy()) throw;
    std::string what = "a build chunk of " + def.target_name();
    auto halted = quarantine_.halt_failure(
        conn, e,
        [&]() -> std::optional<std::vector<apply::TransformWork>> {
          auto chunk = fill_chunk(conn, def);
          if (!chunk) return std::nullopt;
          return std::vector<apply::TransformWork>{chunk->work};
        },
        what);
    if (!halted.empty()) return true;  // paused: the build stops here
    auto charged = quarantine_.charge_failure(
        conn, e,
        [&]() -> std::optional<std::vector<apply::TransformWork>> {
          auto chunk = fill_chunk(conn, def);
          if (!chunk || chunk->phase == catalog::BuildPhase::groups ||
              chunk->phase == catalog::BuildPhase::group_ranges)
            return std::nullopt;  // groups carry no key
          return std::vector<apply::TransformWork>{chunk->work};
        },
        std::nullopt, what);
    if (charged && charged->held) return true;  // the chunk goes on at once without that key
    auto cursor = claim.get_opt(0, 2);
    bool of_groups = phase == BuildPhase::groups || phase == BuildPhase::group_ranges;
    std::string chunk = fmt::format("{} after {}",
                                    of_groups                     ? "groups"
                                    : phase == BuildPhase::target ? "held keys"
                                                                  : "source keys",
                                    cursor ? *cursor : "the start");
    nlohmann::json failure = {{"chunk", chunk}, {"error", e.what()}, {"sqlstate", e.sqlstate()}};
    if (charged)  // retried shortly, and charged again if it still fails
      conn.exec(sql_.retry,
                {std::to_string(id), failure.dump(), std::to_string(charged->retry_ms)});
    else
      conn.exec(sql_.fail, {std::to_string(id), failure.dump()});
    log_build_failure(def, failure);
  }
  return true;
}

bool Builder::fence_passed(pg::Connection& conn, int id) {
  std::string param = std::to_string(id);
  auto state = conn.exec(sql_.fence_passed, {param});
  if (state.rows() == 0) return false;
  if (!state.get_bool(0, 0)) conn.exec(sql_.set_fence, {param});
  // Worker transactions are short (a page, a range): poll for a moment
  // rather than give the claim up for a whole poll interval.
  for (int attempt = 0; attempt < 40; ++attempt) {
    state = conn.exec(sql_.fence_passed, {param});
    if (state.rows() == 0) return false;
    if (state.get_bool(0, 1)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

bool Builder::build_a_range(pg::Connection& conn, const std::set<int>& candidates) {
  for (int id : candidates) {
    auto found = store_.transform_by_id(conn, id);
    if (!found) continue;
    auto discharged = discharge_by_slots(conn, *found);
    if (discharged == Discharge::done) return true;
    if (discharged == Discharge::nothing) continue;  // the claimant ends the phase
    if (!fence_passed(conn, id)) continue;
    RangeClaimResult claimed;
    try {
      claimed = claim_range(conn, *found);
    } catch (const LedgerIndexFailure& f) {
      report_ledger_index_failure(conn, *found, f);
      return true;
    }
    if (claimed.phase_moved) return true;
    if (!claimed.range) {
      // Every group range is claimed (the whole ledger's, say): this
      // thread creates one of the ledger's indexes meanwhile.
      if (claimed.group_ranges_running &&
          create_a_ledger_index_beside_group_ranges(conn, rederiver_.sql(*found)))
        return true;
      continue;
    }
    run_claimed_range(conn, *found, *claimed.range);
    return true;
  }
  return false;
}

Builder::Discharge Builder::discharge_by_slots(pg::Connection& conn,
                                               const catalog::TransformDef& def) {
  auto backoff = discharge_backoff_.find(def.id);
  if (backoff != discharge_backoff_.end()) {
    if (std::chrono::steady_clock::now() < backoff->second) return Discharge::nothing;
    discharge_backoff_.erase(backoff);
  }
  std::string id = std::to_string(def.id);
  try {
    pg::Transaction txn(conn);
    auto state = conn.exec(sql_.discharge_check, {id, std::to_string(def.version)});
    if (state.rows() == 0) return Discharge::not_parked;
    if (!state.get_bool(0, 0)) return Discharge::nothing;  // the claimant sets the fence
    // Slots in order, each whose lock this thread gets, until they hold a
    // transaction's worth of keys: two threads split the slots. The lock is
    // the key slot lock the re-derive's first step takes (again, at once),
    // so a slot a drain page of the transform holds is passed over, not
    // waited for; over a join that fans out, whose discharge maps keys into
    // other slots (taken in slot order by that step), a lock of its own.
    auto parked = conn.exec(sql_.parked_slots, {id});
    int64_t base = def.fans_out() ? compile::parked_slot_claim_base(def.id)
                                  : compile::key_slot_lock_base(def.id);
    std::vector<int> slots;
    int64_t keys = 0;
    for (int i = 0; i < parked.rows() && keys < config_.discharge_keys; ++i) {
      int slot = static_cast<int>(parked.get_int(i, 0));
      std::string claim = std::to_string(base + slot);
      if (!conn.exec(sql_.claim_parked_slot, {claim}).get_bool(0, 0)) continue;
      slots.push_back(slot);
      keys += parked.get_int(i, 1);
    }
    if (slots.empty()) return Discharge::nothing;
    auto moved = conn.exec(sql_.discharge_slots,
                           {id, std::to_string(config_.discharge_keys), pg::int_array(slots)});
    if (moved.affected() == 0) return Discharge::nothing;
    map_parked_fanning_keys(conn, def);
    std::vector<apply::Statement> steps;
    for (const auto& step : rederiver_.sql(def).steps) steps.push_back({step, {}});
    std::vector<apply::Statement> stmts;
    quarantine_.append_hidden(def.id, steps, stmts);
    conn.pipeline(stmts);
    txn.commit();
    return Discharge::done;
  } catch (const pg::SqlError& e) {
    if (!conn.healthy()) throw;
    // The keys stay parked; the claimant's chunks meet the failure again
    // and find, charge or report it as for any chunk.
    spdlog::info("discharge of parked keys of {} failed ({}): left to its build's claimant",
                 def.target_name(), e.what());
    discharge_backoff_[def.id] = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    return Discharge::nothing;
  }
}

void Builder::map_parked_fanning_keys(pg::Connection& conn, const catalog::TransformDef& def) {
  auto fanning = def.fanning_table_ids();
  for (const auto& map : rederiver_.sql(def).map_joined_keys)
    if (fanning.count(map.table_id)) conn.exec(map.sql);
}

Builder::RangeClaimResult Builder::claim_range(pg::Connection& conn,
                                               const catalog::TransformDef& def) {
  std::string id = std::to_string(def.id);
  pg::Transaction txn(conn);
  conn.exec(ranges_.open_frontier, {id});
  auto frontier = conn.exec(ranges_.lock_frontier, {id, std::to_string(def.version)});
  if (frontier.rows() == 0 || !frontier.get_bool(0, 1)) return {};  // moved on meanwhile
  if (!frontier.get_bool(0, 0)) {  // left by an earlier phase or build
    conn.exec(ranges_.reset_frontier, {id});
    frontier = conn.exec(ranges_.lock_frontier, {id, std::to_string(def.version)});
  }
  if (frontier.get_bool(0, 6)) return {};  // turned over to keyset chunks
  RangeClaim claim;
  claim.fence = frontier.get(0, 2);
  claim.phase = catalog::phase_named(frontier.get(0, 3));
  auto taken = conn.exec(ranges_.take_over, {id, claim.fence});
  if (taken.rows() > 0) {  // a claim whose backend is gone or let it go
    claim.seq = static_cast<int>(taken.get_int(0, 0));
    claim.lo = taken.get_opt(0, 1);
    claim.hi = taken.get_opt(0, 2);
    // A part of a split ledger is rerun as its first claimant ran it.
    claim.ledger_part =
        claim.phase == catalog::BuildPhase::group_ranges &&
        !(claim.lo && is_fold_cursor(*claim.lo)) && !(claim.hi && is_fold_cursor(*claim.hi)) &&
        ledger_is_split_into_parts(rederiver_.sql(def), frontier.get_int(0, 8), config_.range_rows);
    txn.commit();
    return {std::move(claim), false};
  }
  if (frontier.get_bool(0, 5)) {  // the last range is claimed
    if (conn.exec(ranges_.any_not_done, {id, claim.fence}).get_bool(0, 0))
      return {std::nullopt, false, claim.phase == catalog::BuildPhase::group_ranges};
    // The transforms row FOR SHARE: still this phase of this version, and
    // no status change commits before the phase moves.
    auto state = conn.exec(ranges_.range_check, {id, std::to_string(def.version), claim.fence,
                                                 std::string(catalog::name(claim.phase))});
    if (state.rows() == 0) return {};  // paused, redefined or moved on meanwhile
    bool rewrite = state.get_bool(0, 0);
    // The parked keys' re-derive (the phase after the group ranges)
    // upserts by the ledger's key. (The group ranges' first claim creates
    // the group indexes unless the phase folds by heap blocks or takes the
    // whole ledger; then they are created here only if the drain reads them.)
    try {
      if (claim.phase == catalog::BuildPhase::group_ranges)
        ensure_ledger_indexes(conn, rederiver_.sql(def));
    } catch (const pg::SqlError& e) {
      if (!conn.healthy() || e.failure_class() == pg::FailureClass::transient) throw;
      throw LedgerIndexFailure{e, "at the end of phase " + std::string(catalog::name(claim.phase))};
    }
    std::vector<apply::Statement> stmts = {{ranges_.finish_phase, {id, claim.fence}}};
    auto next = catalog::next_phase(claim.phase, rewrite, def.shape);
    if (next)
      stmts.push_back({sql_.next_phase, {id, std::string(catalog::name(*next))}});
    else
      stmts.push_back({sql_.go_live, {id}});
    conn.pipeline(stmts);
    txn.commit();
    if (!next) went_live(conn, def);
    return {std::nullopt, true};
  }
  const auto& sql = rederiver_.sql(def);
  claim.seq = static_cast<int>(frontier.get_int(0, 7));
  claim.lo = frontier.get_opt(0, 4);
  bool groups = claim.phase == catalog::BuildPhase::group_ranges;
  const std::string* bound_sql = groups ? &sql.group_range_bound : &sql.source_chunk_bound;
  // A phase folds by heap blocks or goes by group ranges throughout: its
  // first claim decides, and the cursors it leaves say which. A ledger of
  // few enough entries (the rows the source ranges wrote, which the group
  // ranges leave as they are) is split into a part per thread at every
  // claim: no group index, no bound read from one.
  std::string bound_size = std::to_string(config_.range_rows);  // $2: entries, or parts
  if (groups && !sql.fold_range_bound.empty() &&
      (claim.lo ? is_fold_cursor(*claim.lo) : few_groups_into_empty_target(conn, sql)))
    bound_sql = &sql.fold_range_bound;
  else if (groups && ledger_is_split_into_parts(sql, frontier.get_int(0, 8), config_.range_rows)) {
    bound_sql = &sql.group_split_bound;
    bound_size = std::to_string(config_.threads);
    claim.ledger_part = true;
  } else if (groups && !claim.lo)  // group ranges read the ledger's group index
    try {
      ensure_ledger_indexes(conn, sql, LedgerReads::groups);
    } catch (const pg::SqlError& e) {
      if (!conn.healthy() || e.failure_class() == pg::FailureClass::transient) throw;
      throw LedgerIndexFailure{e, "at the start of phase group_ranges"};
    }
  auto bound = conn.exec(*bound_sql, {claim.lo, bound_size});
  claim.hi = bound.rows() ? bound.get_opt(0, 0) : std::nullopt;
  conn.exec(ranges_.add_claim, {id, claim.fence, std::to_string(claim.seq), claim.lo, claim.hi});
  txn.commit();
  return {std::move(claim), false};
}

void Builder::run_claimed_range(pg::Connection& conn, const catalog::TransformDef& def,
                                const RangeClaim& claim) {
  const auto& sql = rederiver_.sql(def);
  std::string id = std::to_string(def.id);
  std::vector<pg::Param> key = {id, claim.fence, std::to_string(claim.seq)};
  bool groups = claim.phase == catalog::BuildPhase::group_ranges;
  bool by_chunks = false;
  std::vector<pg::Param> check = {id, std::to_string(def.version), claim.fence,
                                  std::string(catalog::name(claim.phase))};
  // A part of a split ledger (or the whole ledger) is read by its heap and
  // starts at once; a thread that finds every part claimed creates the
  // indexes meanwhile.
  bool by_heap = groups && (claim.ledger_part || is_whole_group_range(claim.lo, claim.hi));
  if (groups && !by_heap) create_a_ledger_index_beside_group_ranges(conn, sql);
  try {
    if (!groups) index_ledger_before_a_rewrite(conn, sql, ranges_.range_check, check);
    pg::Transaction txn(conn);
    auto state = conn.exec(ranges_.range_check, check);
    if (state.rows() == 0) return;  // paused, redefined or moved on meanwhile
    if (conn.exec(ranges_.lock_claim, key).rows() == 0) return;  // no longer this backend's
    bool rewrite = state.get_bool(0, 0);
    // Held keys stay as they are; keyset chunks leave them out. (Group
    // ranges read the ledger, where a held key's entry stays as it was.)
    by_chunks = !groups && conn.exec(sql_.holds_keys, {id}).get_bool(0, 0);
    if (!by_chunks) {
      int64_t rows = 0;  // source rows built (group ranges add none)
      bool fold =
          (claim.lo && is_fold_cursor(*claim.lo)) || (claim.hi && is_fold_cursor(*claim.hi));
      if (groups && fold)  // into a target that was empty when the phase began
        conn.exec(sql.fold_range_insert, {claim.lo, claim.hi});
      else if (groups) {
        if (by_heap) conn.exec(compile::kLedgerPartMemory);
        conn.exec(rewrite ? sql.group_range_rewrite : sql.group_range_insert, {claim.lo, claim.hi});
      } else if (rewrite)
        rows = conn.exec(sql.range_rewrite, {claim.lo, claim.hi}).get_int(0, 0);
      else
        rows = conn.exec(sql.range_insert, {claim.lo, claim.hi}).affected();
      auto done = key;
      done.push_back(std::to_string(rows));
      conn.exec(ranges_.complete_claim, done);
      txn.commit();
    }
  } catch (const pg::SqlError& e) {
    if (!conn.healthy()) throw;
    if (e.failure_class() == pg::FailureClass::transient) {
      spdlog::debug("build range of {} failed ({}): it is retried", def.target_name(), e.what());
      conn.exec(ranges_.release_claim, key);
      return;
    }
    // The chunk path finds the failing key and charges it, or halts the
    // transform, or reports the failure, as for any chunk.
    spdlog::info("build range of {} failed ({}): building the rest of this phase by keyset chunks",
                 def.target_name(), e.what());
    by_chunks = true;
  }
  if (!by_chunks) return;
  try {
    pg::Transaction txn(conn);
    if (conn.exec(ranges_.lock_for_chunks, {id, claim.fence}).rows() == 0) return;
    // Group chunks walk the group index; the drains re-derive the chunks' keys.
    ensure_ledger_indexes(conn, sql, LedgerReads::drain_and_groups);
    conn.exec(ranges_.to_chunks, {id, claim.fence});
    txn.commit();
  } catch (const pg::SqlError& e) {
    if (!conn.healthy() || e.failure_class() == pg::FailureClass::transient) throw;
    report_ledger_index_failure(conn, def, {e, "before keyset chunks"});
  }
}

std::optional<Builder::Chunk> Builder::fill_chunk(pg::Connection& conn,
                                                  const catalog::TransformDef& def) {
  const auto& sql = rederiver_.sql(def);
  std::string id = std::to_string(def.id);
  auto state = conn.exec(sql_.check, {id, std::to_string(def.version)});
  if (state.rows() == 0) return std::nullopt;  // paused, redefined or reclaimed meanwhile
  Chunk chunk;
  using catalog::BuildPhase;
  chunk.phase = state.get_opt(0, 0) ? catalog::phase_named(state.get(0, 0)) : BuildPhase::source;
  auto cursor = state.get_opt(0, 1);
  bool sweep = state.get_bool(0, 2);
  chunk.work = {def.id, def.target_name(), def.source_table_id, {}, std::nullopt};
  if (def.shape == catalog::Shape::one_to_one) chunk.work.one_to_one = def;
  if (chunk.phase == BuildPhase::parked) {           // re-derive parked keys as a drain page would
    if (!state.get_bool(0, 5)) return std::nullopt;  // the phase's fence has not passed
    // Whatever no thread's slot discharge has taken (those committed
    // before this transforms row lock was granted): none left ends the
    // phase.
    auto moved = conn.exec(sql_.discharge, {id, std::to_string(config_.discharge_keys)});
    map_parked_fanning_keys(conn, def);
    for (const auto& step : sql.steps) chunk.work.steps.push_back({step, {}});
    chunk.next = moved.affected() > 0 ? std::optional(BuildPhase::parked)
                                      : catalog::next_phase(BuildPhase::parked, sweep, def.shape);
    return chunk;
  }
  bool over_target = chunk.phase == BuildPhase::target || chunk.phase == BuildPhase::fields;
  bool groups = chunk.phase == BuildPhase::groups || chunk.phase == BuildPhase::group_ranges;
  const std::string& bound_sql = groups        ? sql.group_chunk_bound
                                 : over_target ? sql.sweep_chunk_bound
                                               : sql.source_chunk_bound;
  auto bound = conn.exec(bound_sql, {cursor, std::to_string(config_.chunk_rows)});
  chunk.upper = bound.rows() ? bound.get_opt(0, 0) : std::nullopt;
  const std::string& fill = groups        ? sql.page_group_range
                            : over_target ? sql.page_sweep_range
                                          : sql.page_source_range;
  conn.exec(fill, {cursor, chunk.upper});
  // A rebuild by keyset chunks of a ranges phase also visits the target's
  // rows in the chunk, as the range statement would have.
  if (chunk.phase == BuildPhase::ranges && sweep)
    conn.exec(sql.page_sweep_range, {cursor, chunk.upper});
  std::vector<std::string> field_steps;
  if (chunk.phase == BuildPhase::fields)
    field_steps = compile::one_to_one_field_build_steps(
        def, nlohmann::json::parse(state.get(0, 3)).get<std::vector<std::string>>());
  const auto& steps = groups                              ? sql.group_steps
                      : chunk.phase == BuildPhase::fields ? field_steps
                                                          : sql.build_steps;
  for (const auto& step : steps) chunk.work.steps.push_back({step, {}});
  chunk.next =
      chunk.upper ? std::optional(chunk.phase) : catalog::next_phase(chunk.phase, sweep, def.shape);
  return chunk;
}

void Builder::run_chunk(pg::Connection& conn, const catalog::TransformDef& def) {
  std::string id = std::to_string(def.id);
  pg::Transaction txn(conn);
  auto chunk = fill_chunk(conn, def);
  if (!chunk) return;
  std::vector<apply::Statement> stmts;
  quarantine_.append_hidden(def.id, chunk->work.steps, stmts);
  bool done = !chunk->upper && !chunk->next;
  bool discharging = chunk->phase == catalog::BuildPhase::parked;
  if (!discharging) stmts.push_back({sql_.advance, {id, chunk->upper}});
  if (!chunk->upper && !done && chunk->next != chunk->phase)
    stmts.push_back({sql_.next_phase, {id, std::string(catalog::name(*chunk->next))}});
  if (done) stmts.push_back({sql_.go_live, {id}});
  conn.pipeline(stmts);
  txn.commit();
  if (done) went_live(conn, def);
}

// After the commit that made it live, by either path: log it, then analyze.
void Builder::went_live(pg::Connection& conn, const catalog::TransformDef& def) {
  base::log_event(spdlog::level::info, "live", def.target_name(), nlohmann::json::object(),
                  fmt::format("transform {} is live", def.target_name()));
  analyze_tables(conn, def);
}

// Once live, off the build's path: the drains probe the tables per key.
void Builder::analyze_tables(pg::Connection& conn, const catalog::TransformDef& def) {
  try {
    for (const auto& stmt : rederiver_.sql(def).analyze) conn.exec(stmt);
  } catch (const pg::SqlError& e) {
    if (!conn.healthy()) throw;
    // Only the plans suffer; autovacuum analyses the tables in time.
    spdlog::debug("ANALYZE of {} after its build failed: {}", def.target_name(), e.what());
  }
}

}  // namespace trellis::build
