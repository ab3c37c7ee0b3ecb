// sample_quarantined and release_key (README, "Operations"). A release re-derives the
// held key exactly as a drain page would (its steps lock before they read,
// I1), with the key alone in the page, and forgets the key in the same
// transaction; if the re-derive still fails, the key stays held with the new
// error and the caller is told why.
#include <fmt/format.h>

#include "api/instance.hpp"
#include "base/event_log.hpp"
#include "compile/quarantine_sql.hpp"
#include "compile/transform_sql.hpp"
#include "pg/sql_error.hpp"

namespace trellis::api {

QuarantinePage sample_quarantined(Trellis::Impl& impl, const std::string& target, int limit,
                                  const std::string& cursor) {
  auto conn = impl.pool.acquire();
  // A field ("t.f") pages through the keys that failed in it.
  auto [def, column] = locate(impl, *conn, target);
  auto sql = compile::compile_quarantine(impl.store.schema());
  auto r = conn->exec(sql.sample,
                      {std::to_string(def.id), std::to_string(std::max(limit, 0)), cursor, column});
  QuarantinePage page{{}, cursor};
  for (int i = 0; i < r.rows(); ++i) {
    page.keys.push_back({r.get(i, 0), r.get(i, 1), static_cast<int>(r.get_int(i, 2)), r.get(i, 3),
                         r.get(i, 4), r.get(i, 5)});
    page.cursor = r.get(i, 6);
  }
  return page;
}

void release_key(Trellis::Impl& impl, const std::string& target, const std::string& table,
                 const std::string& key) {
  auto conn = impl.pool.acquire();
  auto def = require_transform(impl, *conn, target);
  auto [schema, name] = split_target(impl, table);
  auto source = impl.store.captured_table(*conn, schema, name);
  if (!source || source->id != def.source_table_id)
    throw Error(ErrorCode::not_found,
                fmt::format("{} does not read {}.{}; its source is {}", def.target_name(), schema,
                            name, def.source_name()));
  if (def.status == catalog::Status::paused)
    throw Error(ErrorCode::conflict,
                fmt::format("{} is paused; RESUME TRANSFORM {} rebuilds every key instead",
                            def.target_name(), def.target_name()));
  auto q = compile::compile_quarantine(impl.store.schema());
  for (const auto& ddl : compile::create_temp_tables_sql()) conn->exec(ddl);
  std::string id = std::to_string(def.id), tbl = std::to_string(def.source_table_id);
  std::string stored_key;
  try {
    pg::Transaction txn(*conn);
    auto held = conn->exec(q.lock_held, {id, tbl, key});
    if (held.rows() == 0)
      throw Error(ErrorCode::not_found,
                  fmt::format("key {} of {}.{} is not held for {}; `trellis quarantine list {}` "
                              "shows the held keys",
                              key, schema, name, def.target_name(), def.target_name()));
    stored_key = held.get(0, 0);
    std::vector<std::pair<std::string, std::vector<pg::Param>>> stmts = {
        {q.put_key_in_page, {tbl, stored_key}}};
    for (const auto& step : compile::compile_transform(def).steps) stmts.push_back({step, {}});
    stmts.push_back({q.release, {id, tbl, stored_key}});
    conn->pipeline(stmts);
    txn.commit();
    base::log_event(spdlog::level::info, "key_released", def.target_name(),
                    {{"table", schema + "." + name}, {"key", stored_key}},
                    fmt::format("key {} of {}.{} released for {}: re-derived", stored_key, schema,
                                name, def.target_name()));
  } catch (const pg::SqlError& e) {
    if (!conn->healthy() || pg::classify_sqlstate(e.sqlstate()) != pg::FailureClass::data) throw;
    if (stored_key.empty())  // the key itself did not read as JSON
      throw Error(ErrorCode::validation,
                  fmt::format("key {} is not a JSON value ({}); give it as `trellis quarantine "
                              "list` shows it, e.g. [\"42\"], or a bare value for a one-column key",
                              key, e.what()));
    conn->exec(q.record_failure, {id, tbl, stored_key, e.what(), e.sqlstate()});
    throw Error(ErrorCode::conflict,
                fmt::format("key {} of {}.{} still fails for {}: {}; fix the source row (or what "
                            "the target requires) and release it again",
                            key, schema, name, def.target_name(), e.what()));
  }
}

}  // namespace trellis::api
