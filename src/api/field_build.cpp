// Field builds, shared by ALTER TRANSFORM and RESUME TRANSFORM t.col: the
// catalog row is locked against concurrent edits, then a live transform goes
// back to `backfilling` to rebuild just the named fields (an unfinished
// field build is merged in; a full build under way restarts, since its
// earlier chunks wrote the old fields). The staging worker starts the build
// once capture covers the fields and drains holding the old definition are
// done (capture/reconciler).
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/instance.hpp"

namespace trellis::api {

EditLock lock_for_edit(Trellis::Impl& impl, pg::Connection& conn, const catalog::TransformDef& def,
                       const std::string& statement) {
  auto row = conn.exec(fmt::format("SELECT status, version, array_to_json(build_fields)::text "
                                   "FROM {} WHERE id = $1::int FOR UPDATE",
                                   impl.store.table("transforms")),
                       {std::to_string(def.id)});
  if (row.rows() == 0 || row.get_int(0, 1) != def.version)
    throw Error(ErrorCode::conflict,
                fmt::format("transform {} changed while the {} ran; run it again",
                            def.target_name(), statement));
  EditLock lock{def.id, row.get(0, 0), std::nullopt};
  if (auto pending = row.get_opt(0, 2))
    lock.pending = nlohmann::json::parse(*pending).get<std::vector<std::string>>();
  return lock;
}

bool start_field_build(Trellis::Impl& impl, pg::Connection& conn, const EditLock& lock,
                       std::vector<std::string> fields, const std::vector<std::string>& gone) {
  if (fields.empty() || (lock.status != "live" && lock.status != "backfilling")) return false;
  bool full = lock.status == "backfilling" && !lock.pending;
  if (lock.pending)
    for (const auto& name : *lock.pending)
      if (std::find(fields.begin(), fields.end(), name) == fields.end() &&
          std::find(gone.begin(), gone.end(), name) == gone.end())
        fields.push_back(name);
  conn.exec(
      fmt::format("UPDATE {} SET status = 'backfilling', build_phase = 'awaiting_capture', "
                  "build_fields = CASE WHEN $2::jsonb IS NULL THEN NULL ELSE ARRAY(SELECT "
                  "jsonb_array_elements_text($2::jsonb)) END, build_fence = NULL, "
                  "build_cursor = NULL, build_rows_done = 0, build_owner_pid = NULL, "
                  "build_owner_start = NULL, build_not_before = NULL, backfill_failure = "
                  "NULL WHERE id = $1::int",
                  impl.store.table("transforms")),
      {std::to_string(lock.id), full ? pg::Param{} : pg::Param{nlohmann::json(fields).dump()}});
  return true;
}

}  // namespace trellis::api
