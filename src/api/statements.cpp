// The statements (README, "The statement language") as catalog changes. Define registers only: it
// validates, then creates the target and the catalog rows in one transaction
// and returns at waiting_to_backfill; the staging worker and drains do the rest.
#include <fmt/format.h>

#include "api/instance.hpp"
#include "base/event_log.hpp"
#include "base/sql_text.hpp"
#include "bind/validate.hpp"
#include "catalog/transitions.hpp"
#include "compile/quarantine_sql.hpp"
#include "compile/rejected_matches.hpp"
#include "compile/transform_sql.hpp"
#include "pg/sql_error.hpp"

namespace trellis::api {

namespace {

std::string target_of(const Trellis::Impl& impl, const lang::QualifiedName& name) {
  return name.schema.value_or(impl.options.target_schema) + "." + name.name;
}

// Returns the note of an adoption ("" otherwise).
std::string register_transform(Trellis::Impl& impl, pg::Connection& conn,
                               catalog::TransformDef& def) {
  pg::Transaction txn(conn);
  def.source_table_id =
      impl.store.ensure_captured_table(conn, def.source_schema, def.source_table, def.key);
  for (auto& j : def.joins)
    j.table_id = impl.store.ensure_captured_table(conn, j.schema, j.table, j.key);
  std::string note;
  try {
    if (def.adopted)
      note = adopt_target(conn, def);
    else
      for (const auto& ddl : compile::compile_transform(def).create) conn.exec(ddl);
  } catch (const pg::SqlError& e) {
    // The target, or a side table beside it (its ledger, its rejected
    // matches), which PostgreSQL's message names.
    if (pg::is_duplicate_table(e))
      throw Error(ErrorCode::conflict,
                  fmt::format("{} (creating transform {}); pick another target name", e.what(),
                              def.target_name()));
    throw;
  }
  impl.lifecycle.define(conn, def);
  txn.commit();
  base::log_event(spdlog::level::info, "defined", def.target_name(),
                  {{"shape", std::string(catalog::name(def.shape))},
                   {"adopted", def.adopted},
                   {"statement", def.statement}},
                  fmt::format("transform {} defined; it builds once capture covers its reads",
                              def.target_name()));
  return note;
}

}  // namespace

Applied define_transform(Trellis::Impl& impl, const lang::TransformStmt& stmt) {
  auto conn = impl.pool.acquire();
  bind::ValidateContext ctx{impl.options.target_schema, false};
  auto def = bind::validate_transform(*conn, impl.store, stmt, ctx);
  std::string note = register_transform(impl, *conn, def);
  Applied applied{"transform", def.target_name(), std::string(catalog::name(def.status))};
  applied.note = std::move(note);
  return applied;
}

Applied pause_transform(Trellis::Impl& impl, const lang::PauseStmt& stmt) {
  auto conn = impl.pool.acquire();
  auto [def, column] = locate(impl, *conn, stmt.target, stmt.column);
  if (column) return pause_column(impl, def, *column);
  impl.lifecycle.pause(*conn, def.id);
  base::log_event(spdlog::level::info, "paused", def.target_name(), {{"kind", "operator"}},
                  fmt::format("transform {} paused by PAUSE TRANSFORM", def.target_name()));
  return {"pause", def.target_name(), word(Lifecycle::paused)};
}

Applied resume_transform(Trellis::Impl& impl, const lang::ResumeStmt& stmt) {
  auto conn = impl.pool.acquire();
  auto [def, column] = locate(impl, *conn, stmt.target, stmt.column);
  if (column) return resume_column(impl, def, *column);
  if (!catalog::allowed(catalog::Operation::resume, def.status))
    return {"resume", def.target_name(), std::string(catalog::name(def.status))};
  auto parsed = std::get<lang::TransformStmt>(lang::parse_statement(def.statement));
  bind::ValidateContext ctx{impl.options.target_schema, true, &def};
  auto fresh = bind::validate_transform(*conn, impl.store, parsed, ctx);
  pg::Transaction txn(*conn);
  // The table of the matches the WHERE rejects follows the definition the
  // rebuild writes (it rewrites the table's rows with the target's).
  conn->exec(compile::sync_rejected_matches(fresh));
  if (!impl.lifecycle.resume(*conn, def.id, fresh)) {
    // Resumed (or paused and resumed) by another session meanwhile.
    auto now = impl.store.transform_by_id(*conn, def.id);
    return {"resume", def.target_name(),
            now ? std::string(catalog::name(now->status)) : word(Lifecycle::paused)};
  }
  txn.commit();
  // The rebuild re-derives every key, so held keys and charges are forgotten
  // (which re-arms the fuse of a quarantined transform).
  conn->exec(compile::compile_quarantine(impl.store.schema()).clear_transform,
             {std::to_string(def.id)});
  base::log_event(spdlog::level::info, "resumed", def.target_name(),
                  {{"from", std::string(catalog::name(def.status))}},
                  fmt::format("transform {} resumed from {}: capture reinstalled if needed, "
                              "rebuilding",
                              def.target_name(), catalog::name(def.status)));
  return {"resume", def.target_name(), word(Lifecycle::waiting_to_backfill)};
}

Applied drop_transform(Trellis::Impl& impl, const lang::DropTransformStmt& stmt) {
  auto conn = impl.pool.acquire();
  auto def = impl.store.transform(*conn, stmt.target.schema.value_or(impl.options.target_schema),
                                  stmt.target.name);
  if (!def) return {"drop", target_of(impl, stmt.target), "dropped"};
  if (!catalog::allowed(catalog::Operation::drop, def->status))
    throw Error(ErrorCode::validation,
                fmt::format("transform {} is {}; run PAUSE TRANSFORM {} before dropping it",
                            def->target_name(), catalog::name(def->status), def->target_name()));
  auto readers = readers_of_target(impl, *conn, *def);
  if (!readers.empty())
    throw Error(ErrorCode::validation,
                fmt::format("transform {} is read by transform {}; drop that one first",
                            def->target_name(), readers.front().target_name()));
  pg::Transaction txn(*conn);
  if (!impl.lifecycle.drop(*conn, def->id))
    throw Error(
        ErrorCode::conflict,
        fmt::format("transform {} changed while the DROP ran; run it again", def->target_name()));
  std::string note;
  if (def->adopted)
    note = release_adopted_target(*conn, *def);
  else
    for (const auto& ddl : compile::compile_transform(*def).drop) conn->exec(ddl);
  txn.commit();
  base::log_event(spdlog::level::info, "dropped", def->target_name(), {{"adopted", def->adopted}},
                  fmt::format("transform {} dropped{}", def->target_name(),
                              def->adopted ? "; its table keeps its last rows" : ""));
  Applied applied{"drop", def->target_name(), "dropped"};
  applied.note = std::move(note);
  return applied;
}

}  // namespace trellis::api
