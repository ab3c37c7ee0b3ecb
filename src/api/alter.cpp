// ALTER TRANSFORM (README, "The statement language"): edits the fields of a 1-1 transform in place.
// The edited statement is validated as define would validate it; then, in
// one transaction, the target's columns are dropped and added, the catalog
// row gets the new definition and version, and a live transform goes back
// to `backfilling` with a field build of just the added and altered fields
// (build_phase 'awaiting_capture' until the staging worker has widened
// capture and fenced off drains that may still hold the old definition).
// From the commit on, drains re-derive with the new definition.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "api/instance.hpp"
#include "base/event_log.hpp"
#include "base/sql_text.hpp"
#include "bind/validate.hpp"
#include "compile/one_to_one.hpp"
#include "lang/field_edit.hpp"
#include "pg/lock_timeout.hpp"
#include "pg/sql_error.hpp"

namespace trellis::api {

namespace {

// How long the edit waits for the target's lock (readers of the target
// queue behind it meanwhile).
constexpr std::chrono::seconds kTargetLockTimeout{2};

const catalog::Field* field_named(const catalog::TransformDef& def, const std::string& name) {
  for (const auto& f : def.fields)
    if (f.name == name) return &f;
  return nullptr;
}

void refuse_retyping(const catalog::TransformDef& before, const catalog::TransformDef& after,
                     const std::vector<std::string>& altered) {
  for (const auto& name : altered) {
    const auto* old_field = field_named(before, name);
    const auto* new_field = field_named(after, name);
    if (old_field->column.type == new_field->column.type) continue;
    throw Error(ErrorCode::validation,
                fmt::format("field \"{}\" of {} is {} and the new expression gives {}; ALTER "
                            "keeps a column's type: use DROP {}, ADD <expr> AS {} to re-create "
                            "it, or cast the expression to {}",
                            name, before.target_name(), old_field->column.type,
                            new_field->column.type, name, name, old_field->column.type));
  }
}

// A column another transform reads cannot go away (or be re-created).
void refuse_dropping_read_columns(Trellis::Impl& impl, pg::Connection& conn,
                                  const catalog::TransformDef& def,
                                  const std::vector<std::string>& dropped) {
  for (const auto& reader : readers_of_target(impl, conn, def))
    for (const auto& c : reader.reads)
      if (std::find(dropped.begin(), dropped.end(), c.name) != dropped.end())
        throw Error(ErrorCode::validation,
                    fmt::format("field \"{}\" of {} is read by transform {}; change or drop that "
                                "transform first",
                                c.name, def.target_name(), reader.target_name()));
}

// The fields that identify a target's rows (TransformDef::identity) stay.
void refuse_editing_identity(const catalog::TransformDef& def,
                             const std::vector<std::string>& edited, const char* verb) {
  for (const auto& name : edited)
    if (def.identifies(name))
      throw Error(ErrorCode::validation,
                  fmt::format("field \"{}\" of {} is the column of {} that identifies its rows "
                              "(the target's key); ALTER cannot {} it",
                              name, def.target_name(), def.source_name(), verb));
}

catalog::TransformDef load(Trellis::Impl& impl, pg::Connection& conn,
                           const lang::AlterTransformStmt& stmt) {
  auto def = require_transform(impl, conn, stmt.target);
  if (def.shape == catalog::Shape::one_to_one) return def;
  // A transform that aggregates a to-many join or relationship per source
  // row reads as a 1-1 but is grouped by the source's key.
  bool per_source_row = def.group.size() >= def.key.size() &&
                        std::equal(def.key.begin(), def.key.end(), def.group.begin(),
                                   [](const catalog::Column& k, const catalog::Column& g) {
                                     return k.name == g.name;
                                   });
  std::string grouping =
      def.group.empty()
          ? "is a one-row aggregate"
          : fmt::format("is an aggregate grouped by ({})",
                        base::join<catalog::Column>(
                            def.group, ", ", [](const catalog::Column& c) { return c.name; }));
  if (per_source_row)
    grouping +=
        " (one row per source row, because a field aggregates over a to-many join or "
        "relationship)";
  throw Error(ErrorCode::validation,
              fmt::format("ALTER TRANSFORM changes 1-1 transforms only, and {} {}; to change it, "
                          "PAUSE and DROP it and define it again",
                          def.target_name(), grouping));
}

}  // namespace

Applied alter_transform(Trellis::Impl& impl, const lang::AlterTransformStmt& stmt) {
  auto conn = impl.pool.acquire();
  auto def = load(impl, *conn, stmt);
  auto stored = std::get<lang::TransformStmt>(lang::parse_statement(def.statement));
  auto edit = lang::edit_fields(stored, stmt, def.target_name());
  Applied applied{"alter",    def.target_name(), std::string(catalog::name(def.status)),
                  edit.added, edit.dropped,      edit.altered};
  if (!edit.changed()) return applied;
  if (edit.edited.fields.empty())
    throw Error(ErrorCode::validation,
                fmt::format("ALTER would leave {} without fields ({} dropped); keep at least one",
                            def.target_name(),
                            base::join<std::string>(edit.dropped, ", ", [](const std::string& n) {
                              return "\"" + n + "\"";
                            })));
  refuse_editing_identity(def, edit.dropped, "drop");
  refuse_editing_identity(def, edit.altered, "change");
  bind::ValidateContext ctx{impl.options.target_schema, true, &def};
  for (const auto& f : edit.edited.fields)
    if (f.expr.has_aggregate_call)
      throw Error(ErrorCode::validation,
                  fmt::format("ALTER would turn 1-1 transform {} into a one-row aggregate (field "
                              "\"{}\" calls an aggregate function); define the aggregate as a "
                              "transform of its own",
                              def.target_name(), f.name));
  auto fresh = bind::validate_transform(*conn, impl.store, edit.edited, ctx);
  refuse_retyping(def, fresh, edit.altered);
  refuse_dropping_read_columns(impl, *conn, def, edit.dropped);

  pg::Transaction txn(*conn);
  auto lock = lock_for_edit(impl, *conn, def, "ALTER");
  pg::set_local_lock_timeout(*conn, kTargetLockTimeout);
  try {
    if (!edit.dropped.empty() || !edit.added.empty())
      conn->exec(compile::alter_target_columns(fresh, edit.dropped, edit.added));
  } catch (const pg::SqlError& e) {
    if (!pg::is_lock_not_available(e)) throw;
    throw Error(ErrorCode::conflict,
                fmt::format("another session holds a lock on {} ({}); ALTER waited {}s for it, "
                            "run it again once that session is done",
                            def.target_name(), e.what(), kTargetLockTimeout.count()));
  }
  // A dropped field is no longer paused.
  impl.lifecycle.redefine(*conn, def.id, fresh, edit.dropped);
  std::vector<std::string> fields = edit.added;
  fields.insert(fields.end(), edit.altered.begin(), edit.altered.end());
  bool build = start_field_build(impl, *conn, lock, fields, edit.dropped);
  txn.commit();
  base::log_event(
      spdlog::level::info, "altered", def.target_name(),
      {{"added", edit.added}, {"altered", edit.altered}, {"dropped", edit.dropped}},
      fmt::format("transform {} altered: {} field{} added, {} changed, {} dropped",
                  def.target_name(), edit.added.size(), edit.added.size() == 1 ? "" : "s",
                  edit.altered.size(), edit.dropped.size()));
  if (build) applied.status = catalog::name(catalog::Status::backfilling);
  impl.store.notify_work(*conn);
  return applied;
}

}  // namespace trellis::api
