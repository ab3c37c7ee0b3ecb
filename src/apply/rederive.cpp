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

void Rederiver::append_steps(const catalog::TransformDef& def, size_t first, size_t last,
                             std::vector<Statement>& out) {
  const auto& steps = sql(def).steps;
  for (size_t i = first; i < last && i < steps.size(); ++i) out.push_back({steps[i], {}});
}

void Rederiver::append(const std::vector<catalog::TransformDef>& readers,
                       std::vector<Statement>& out) {
  for (const auto& def : readers) {
    for (const auto& step : sql(def).steps) out.push_back({step, {}});
  }
}

}  // namespace trellis::apply
