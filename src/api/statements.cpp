// The statements of SPEC §2 as catalog changes. Define registers only: it
// validates, then creates the target and the catalog rows in one transaction
// and returns at waiting_to_backfill; the staging worker and drains do the rest.
#include <fmt/format.h>

#include "api/instance.hpp"
#include "base/sql_text.hpp"
#include "compile/drain_sql.hpp"
#include "compile/quarantine_sql.hpp"
#include "compile/transform_sql.hpp"
#include "lang/validate.hpp"
#include "pg/sql_error.hpp"

namespace trellis::api {

namespace {

std::string target_of(const Trellis::Impl& impl, const lang::QualifiedName& name) {
  return name.schema.value_or(impl.options.target_schema) + "." + name.name;
}

void register_transform(Trellis::Impl& impl, pg::Connection& conn, catalog::TransformDef& def) {
  pg::Transaction txn(conn);
  def.source_table_id =
      impl.store.ensure_captured_table(conn, def.source_schema, def.source_table, def.key);
  try {
    for (const auto& ddl : compile::compile_transform(def).create) conn.exec(ddl);
  } catch (const pg::SqlError& e) {
    if (pg::is_duplicate_table(e))
      throw Error(
          ErrorCode::conflict,
          fmt::format("relation {} already exists; pick another target name", def.target_name()));
    throw;
  }
  conn.exec(fmt::format("INSERT INTO {} (target_schema, target_table, source_table_id, shape, "
                        "statement, definition) VALUES ($1, $2, $3::int, $4, $5, $6::jsonb)",
                        impl.store.table("transforms")),
            {def.target_schema, def.target_table, std::to_string(def.source_table_id), def.shape,
             def.statement, catalog::to_json(def).dump()});
  txn.commit();
}

}  // namespace

Applied define_transform(Trellis::Impl& impl, const lang::TransformStmt& stmt) {
  auto conn = impl.pool.acquire();
  lang::ValidateContext ctx{impl.options.target_schema, false};
  auto def = lang::validate_transform(*conn, impl.store, stmt, ctx);
  register_transform(impl, *conn, def);
  return {"transform", def.target_name(), "waiting_to_backfill"};
}

Applied pause_transform(Trellis::Impl& impl, const lang::PauseStmt& stmt) {
  auto conn = impl.pool.acquire();
  auto [def, column] = locate(impl, *conn, stmt.target, stmt.column);
  if (column) return pause_column(impl, def, *column);
  conn->exec(fmt::format("UPDATE {} SET {} WHERE id = $1::int", impl.store.table("transforms"),
                         compile::kPause),
             {std::to_string(def.id)});
  return {"pause", def.target_name(), "paused"};
}

Applied resume_transform(Trellis::Impl& impl, const lang::ResumeStmt& stmt) {
  auto conn = impl.pool.acquire();
  auto [def, column] = locate(impl, *conn, stmt.target, stmt.column);
  if (column) return resume_column(impl, def, *column);
  if (def.status != "paused" && def.status != "quarantined")
    return {"resume", def.target_name(), def.status};
  auto parsed = std::get<lang::TransformStmt>(lang::parse_statement(def.statement));
  lang::ValidateContext ctx{impl.options.target_schema, true};
  auto fresh = lang::validate_transform(*conn, impl.store, parsed, ctx);
  conn->exec(fmt::format("UPDATE {} SET definition = $2::jsonb, version = version + 1, status = "
                         "'waiting_to_backfill', build_sweep_target = true, build_phase = NULL, "
                         "build_fields = NULL, build_fence = NULL, "
                         "build_cursor = NULL, capture_failure = NULL, drain_failure = NULL, "
                         "backfill_failure = NULL, updated_at = now() WHERE id = $1::int",
                         impl.store.table("transforms")),
             {std::to_string(def.id), catalog::to_json(fresh).dump()});
  // The rebuild re-derives every key, so held keys and charges are forgotten
  // (which re-arms the fuse of a quarantined transform).
  conn->exec(compile::compile_quarantine(impl.store.schema()).clear_transform,
             {std::to_string(def.id)});
  return {"resume", def.target_name(), "waiting_to_backfill"};
}

Applied drop_transform(Trellis::Impl& impl, const lang::DropTransformStmt& stmt) {
  auto conn = impl.pool.acquire();
  auto def = impl.store.transform(*conn, stmt.target.schema.value_or(impl.options.target_schema),
                                  stmt.target.name);
  if (!def) return {"drop", target_of(impl, stmt.target), "dropped"};
  if (def->status != "paused")
    throw Error(ErrorCode::validation,
                fmt::format("transform {} is {}; run PAUSE TRANSFORM {} before dropping it",
                            def->target_name(), def->status, def->target_name()));
  auto readers = readers_of_target(impl, *conn, *def);
  if (!readers.empty())
    throw Error(ErrorCode::validation,
                fmt::format("transform {} is read by transform {}; drop that one first",
                            def->target_name(), readers.front().target_name()));
  pg::Transaction txn(*conn);
  conn->exec(fmt::format("DELETE FROM {} WHERE id = $1::int", impl.store.table("transforms")),
             {std::to_string(def->id)});
  for (const auto& ddl : compile::compile_transform(*def).drop) conn->exec(ddl);
  txn.commit();
  return {"drop", def->target_name(), "dropped"};
}

}  // namespace trellis::api
