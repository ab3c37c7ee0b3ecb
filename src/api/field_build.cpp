// Field builds, shared by ALTER TRANSFORM and RESUME TRANSFORM t.col: the
// catalog row is locked against concurrent edits, then a live transform goes
// back to `backfilling` to rebuild just the named fields (an unfinished
// field build is merged in; a full build under way restarts, since its
// earlier chunks wrote the old fields). The staging worker starts the build
// once capture covers the fields and drains holding the old definition are
// done (capture/reconciler).
#include <fmt/format.h>

#include <algorithm>

#include "api/instance.hpp"
#include "catalog/transitions.hpp"

namespace trellis::api {

EditLock lock_for_edit(Trellis::Impl& impl, pg::Connection& conn, const catalog::TransformDef& def,
                       const std::string& statement) {
  auto row = impl.lifecycle.lock_for_edit(conn, def.id, def.version);
  if (!row)
    throw Error(ErrorCode::conflict,
                fmt::format("transform {} changed while the {} ran; run it again",
                            def.target_name(), statement));
  return {def.id, *row};
}

bool start_field_build(Trellis::Impl& impl, pg::Connection& conn, const EditLock& lock,
                       std::vector<std::string> fields, const std::vector<std::string>& gone) {
  const auto& row = lock.row;
  if (fields.empty() || !catalog::allowed(catalog::Operation::start_field_build, row.status))
    return false;
  bool full = row.status == catalog::Status::backfilling && !row.pending_fields;
  if (row.pending_fields)
    for (const auto& name : *row.pending_fields)
      if (std::find(fields.begin(), fields.end(), name) == fields.end() &&
          std::find(gone.begin(), gone.end(), name) == gone.end())
        fields.push_back(name);
  impl.lifecycle.start_field_build(conn, lock.id,
                                   full ? std::nullopt : std::optional(std::move(fields)));
  return true;
}

}  // namespace trellis::api
