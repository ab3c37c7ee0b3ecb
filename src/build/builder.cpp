// One build chunk: find the chunk's upper key, gather the keys in (cursor,
// upper] into the page table, lock and re-derive them, advance the cursor.
// The last chunk of the source phase either starts the target sweep (after a
// RESUME, to drop rows whose source rows went away) or marks the transform live.
#include "build/builder.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "pg/sql_error.hpp"

namespace trellis::build {

Builder::Builder(catalog::Store& store, int ring_slots, BuildConfig config)
    : store_(store), config_(config), sql_(compile::compile_drain(store.schema(), ring_slots)) {}

bool Builder::build_one_chunk(pg::Connection& conn) {
  auto claim = conn.exec(sql_.claim_build);
  if (claim.rows() == 0) return false;
  int id = static_cast<int>(claim.get_int(0, 0));
  auto defs = store_.transforms(conn, "id = " + std::to_string(id));
  if (defs.empty()) return true;
  try {
    run_chunk(conn, defs.front());
  } catch (const pg::SqlError& e) {
    if (!conn.healthy()) throw;
    spdlog::warn("build chunk of {} failed: {} ({})", defs.front().target_name(), e.what(),
                 e.sqlstate());
    auto cursor = claim.get_opt(0, 2);
    std::string chunk =
        fmt::format("{} keys after {}", claim.get(0, 1) == "target" ? "held" : "source",
                    cursor ? *cursor : "the start");
    nlohmann::json failure = {{"chunk", chunk}, {"error", e.what()}, {"sqlstate", e.sqlstate()}};
    conn.exec(sql_.fail_build, {std::to_string(id), failure.dump()});
  }
  return true;
}

// The phase after `phase` for this transform, or "" when the build is done:
// source -> target (only after RESUME) -> groups (only for aggregates).
std::string next_phase(const std::string& phase, bool sweep, const compile::TransformSql& sql) {
  if (phase == "source" && sweep) return "target";
  if (phase != "groups" && !sql.group_chunk_bound.empty()) return "groups";
  return "";
}

void Builder::run_chunk(pg::Connection& conn, const catalog::TransformDef& def) {
  const auto& sql = rederiver_.sql(def);
  std::string id = std::to_string(def.id);
  pg::Transaction txn(conn);
  auto state = conn.exec(sql_.check_build, {id, std::to_string(def.version)});
  if (state.rows() == 0) return;  // paused, redefined or reclaimed meanwhile
  std::string phase = state.get(0, 0).empty() ? "source" : state.get(0, 0);
  auto cursor = state.get_opt(0, 1);
  bool sweep = state.get_bool(0, 2);
  const std::string& bound_sql = phase == "groups"   ? sql.group_chunk_bound
                                 : phase == "target" ? sql.sweep_chunk_bound
                                                     : sql.source_chunk_bound;
  auto bound = conn.exec(bound_sql, {cursor, std::to_string(config_.chunk_rows)});
  pg::Param upper = bound.rows() ? bound.get_opt(0, 0) : std::nullopt;

  std::vector<apply::Statement> stmts;
  if (phase == "groups") {
    stmts.push_back({sql.page_group_range, {cursor, upper}});
    for (const auto& step : sql.group_steps) stmts.push_back({step, {}});
  } else {
    stmts.push_back(
        {phase == "target" ? sql.page_sweep_range : sql.page_source_range, {cursor, upper}});
    for (const auto& step : sql.build_steps) stmts.push_back({step, {}});
  }
  stmts.push_back({sql_.advance_build, {id, upper}});
  std::string next = upper ? phase : next_phase(phase, sweep, sql);
  if (!upper && !next.empty()) stmts.push_back({sql_.next_build_phase, {id, next}});
  if (!upper && next.empty()) stmts.push_back({sql_.finish_build, {id}});
  conn.pipeline(stmts);
  txn.commit();
  if (!upper && next.empty()) spdlog::info("transform {} is live", def.target_name());
}

}  // namespace trellis::build
