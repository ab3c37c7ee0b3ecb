// Shared re-derive statements; see rederive.hpp.
#include "apply/rederive.hpp"

namespace trellis::apply {

const compile::TransformSql& Rederiver::sql(const catalog::TransformDef& def) {
  auto it = cache_.find(def.id);
  if (it == cache_.end() || it->second.first != def.version)
    it = cache_
             .insert_or_assign(def.id, std::make_pair(def.version, compile::compile_transform(def)))
             .first;
  return it->second.second;
}

}  // namespace trellis::apply
