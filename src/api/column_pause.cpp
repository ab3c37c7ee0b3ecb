// PAUSE / RESUME TRANSFORM t.col (docs/architecture.md, Lifecycle): one field of a 1-1 target is
// frozen at its last values while the other fields keep flowing. Pausing
// records the field in the catalog row and bumps the version, so drains and
// builds recompile without it (compile/one_to_one). Transforms reading the
// field report `catching_up` with it in `paused_upstream_columns` (status).
// Resuming removes the mark and rebuilds that field on every row as a field
// build, after which the target matches its definition again.
#include <fmt/format.h>

#include <algorithm>

#include "api/instance.hpp"
#include "base/event_log.hpp"
#include "compile/quarantine_sql.hpp"

namespace trellis::api {

namespace {

std::string address(const catalog::TransformDef& def, const std::string& column) {
  return def.target_name() + "." + column;
}

void require_field(const catalog::TransformDef& def, const std::string& column, const char* verb) {
  if (def.shape != catalog::Shape::one_to_one)
    throw Error(ErrorCode::validation,
                fmt::format("{} TRANSFORM of one column works on 1-1 transforms and {} groups its "
                            "source; {} the whole transform",
                            verb, def.target_name(), verb));
  bool known = std::any_of(def.fields.begin(), def.fields.end(),
                           [&](const catalog::Field& f) { return f.name == column; });
  if (!known)
    throw Error(ErrorCode::not_found,
                fmt::format("transform {} has no field \"{}\"; its fields are the names after AS "
                            "in its SELECT list",
                            def.target_name(), column));
  if (def.identifies(column))
    throw Error(ErrorCode::validation,
                fmt::format("column {} is the column of {} that identifies the target's rows "
                            "(its key), which never changes for a row; {} the whole transform",
                            address(def, column), def.source_name(), verb));
}

}  // namespace

Applied pause_column(Trellis::Impl& impl, const catalog::TransformDef& def,
                     const std::string& column) {
  require_field(def, column, "PAUSE");
  if (def.paused(column))
    return {"pause", address(def, column), std::string(catalog::name(def.status))};
  auto conn = impl.pool.acquire();
  pg::Transaction txn(*conn);
  lock_for_edit(impl, *conn, def, "PAUSE");
  impl.lifecycle.pause_column(*conn, def.id, column);
  txn.commit();
  base::log_event(spdlog::level::info, "column_paused", def.target_name(),
                  {{"column", column}, {"kind", "operator"}},
                  fmt::format("column {} paused by PAUSE TRANSFORM: it keeps its last values",
                              address(def, column)));
  return {"pause", address(def, column), std::string(catalog::name(def.status))};
}

Applied resume_column(Trellis::Impl& impl, const catalog::TransformDef& def,
                      const std::string& column) {
  require_field(def, column, "RESUME");
  if (!def.paused(column))
    throw Error(ErrorCode::validation,
                fmt::format("column {} is not paused; RESUME TRANSFORM {} resumes the whole "
                            "transform",
                            address(def, column), def.target_name()));
  auto conn = impl.pool.acquire();
  pg::Transaction txn(*conn);
  auto lock = lock_for_edit(impl, *conn, def, "RESUME");
  impl.lifecycle.resume_column(*conn, def.id, column);
  // Keys a column fuse let go are forgotten: the field build re-derives them.
  conn->exec(compile::compile_quarantine(impl.store.schema()).clear_column,
             {std::to_string(def.id), column});
  bool build = start_field_build(impl, *conn, lock, {column}, {});
  txn.commit();
  base::log_event(spdlog::level::info, "column_resumed", def.target_name(), {{"column", column}},
                  fmt::format("column {} resumed: rebuilding it", address(def, column)));
  impl.store.notify_work(*conn);
  return {"resume", address(def, column),
          std::string(catalog::name(build ? catalog::Status::backfilling : lock.row.status))};
}

}  // namespace trellis::api
