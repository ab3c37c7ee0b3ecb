// One build chunk: find the chunk's upper key, gather the keys in (cursor,
// upper] into the page table, lock and re-derive them (without the keys the
// transform holds in quarantine), advance the cursor. The last chunk of the
// source phase either starts the target sweep (after a RESUME, to drop rows
// whose source rows went away) or marks the transform live. A chunk failing
// with a data error is redone to find the failing key, which is charged
// (apply/quarantine) instead of reported as a backfill failure; one failing
// with a privilege error halts the transform.
#include "build/builder.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "compile/one_to_one.hpp"
#include "pg/sql_error.hpp"

namespace trellis::build {

Builder::Builder(catalog::Store& store, BuildConfig config)
    : store_(store),
      config_(config),
      sql_(compile::compile_drain(store.schema())),
      quarantine_(store.schema()) {}

bool Builder::build_one_chunk(pg::Connection& conn) {
  auto claim = conn.exec_prepared(sql_.claim_build);
  if (claim.rows() == 0) return false;
  int id = static_cast<int>(claim.get_int(0, 0));
  auto found = store_.transform_by_id(conn, id);
  if (!found) return true;
  const auto& def = *found;
  try {
    run_chunk(conn, def);
  } catch (const pg::SqlError& e) {
    if (!conn.healthy()) throw;
    spdlog::warn("build chunk of {} failed: {} ({})", def.target_name(), e.what(), e.sqlstate());
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
          if (!chunk || chunk->phase == "groups") return std::nullopt;  // groups carry no key
          return std::vector<apply::TransformWork>{chunk->work};
        },
        std::nullopt, what);
    if (charged && charged->held) return true;  // the chunk goes on at once without that key
    auto cursor = claim.get_opt(0, 2);
    std::string chunk =
        fmt::format("{} keys after {}", claim.get(0, 1) == "target" ? "held" : "source",
                    cursor ? *cursor : "the start");
    nlohmann::json failure = {{"chunk", chunk}, {"error", e.what()}, {"sqlstate", e.sqlstate()}};
    if (charged)  // retried shortly, and charged again if it still fails
      conn.exec(sql_.retry_build,
                {std::to_string(id), failure.dump(), std::to_string(charged->retry_ms)});
    else
      conn.exec(sql_.fail_build, {std::to_string(id), failure.dump()});
  }
  return true;
}

// The phase after `phase` for this transform, or "" when the build is done:
// source -> target (only after RESUME) -> groups (only for aggregates); a
// field build (ALTER TRANSFORM) is the single phase "fields".
std::string next_phase(const std::string& phase, bool sweep, const compile::TransformSql& sql) {
  if (phase == "fields") return "";
  if (phase == "source" && sweep) return "target";
  if (phase != "groups" && !sql.group_chunk_bound.empty()) return "groups";
  return "";
}

std::optional<Builder::Chunk> Builder::fill_chunk(pg::Connection& conn,
                                                  const catalog::TransformDef& def) {
  const auto& sql = rederiver_.sql(def);
  std::string id = std::to_string(def.id);
  auto state = conn.exec(sql_.check_build, {id, std::to_string(def.version)});
  if (state.rows() == 0) return std::nullopt;  // paused, redefined or reclaimed meanwhile
  Chunk chunk;
  chunk.phase = state.get(0, 0).empty() ? "source" : state.get(0, 0);
  auto cursor = state.get_opt(0, 1);
  bool sweep = state.get_bool(0, 2);
  bool over_target = chunk.phase == "target" || chunk.phase == "fields";
  const std::string& bound_sql = chunk.phase == "groups" ? sql.group_chunk_bound
                                 : over_target           ? sql.sweep_chunk_bound
                                                         : sql.source_chunk_bound;
  auto bound = conn.exec(bound_sql, {cursor, std::to_string(config_.chunk_rows)});
  chunk.upper = bound.rows() ? bound.get_opt(0, 0) : std::nullopt;
  const std::string& fill = chunk.phase == "groups" ? sql.page_group_range
                            : over_target           ? sql.page_sweep_range
                                                    : sql.page_source_range;
  conn.exec(fill, {cursor, chunk.upper});
  chunk.work = {def.id, def.source_table_id, {}, std::nullopt};
  if (def.shape == "one_to_one") chunk.work.one_to_one = def;
  std::vector<std::string> field_steps;
  if (chunk.phase == "fields")
    field_steps = compile::one_to_one_field_build_steps(
        def, nlohmann::json::parse(state.get(0, 3)).get<std::vector<std::string>>());
  const auto& steps = chunk.phase == "groups"   ? sql.group_steps
                      : chunk.phase == "fields" ? field_steps
                                                : sql.build_steps;
  for (const auto& step : steps) chunk.work.steps.push_back({step, {}});
  chunk.next = chunk.upper ? chunk.phase : next_phase(chunk.phase, sweep, sql);
  return chunk;
}

void Builder::run_chunk(pg::Connection& conn, const catalog::TransformDef& def) {
  std::string id = std::to_string(def.id);
  pg::Transaction txn(conn);
  auto chunk = fill_chunk(conn, def);
  if (!chunk) return;
  std::vector<apply::Statement> stmts;
  quarantine_.append_hidden(def.id, chunk->work.steps, stmts);
  stmts.push_back({sql_.advance_build, {id, chunk->upper}});
  bool done = !chunk->upper && chunk->next.empty();
  if (!chunk->upper && !done) stmts.push_back({sql_.next_build_phase, {id, chunk->next}});
  if (done) stmts.push_back({sql_.finish_build, {id}});
  conn.pipeline(stmts);
  txn.commit();
  if (done) spdlog::info("transform {} is live", def.target_name());
}

}  // namespace trellis::build
