// Re-derives the keys gathered in the page table for a set of transforms:
// the statements a drain page and a build chunk share. Compiled SQL is cached
// per transform version.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "catalog/definition.hpp"
#include "compile/transform_sql.hpp"
#include "pg/connection.hpp"

namespace trellis::apply {

using Statement = std::pair<std::string, std::vector<pg::Param>>;

class Rederiver {
 public:
  const compile::TransformSql& sql(const catalog::TransformDef& def);

 private:
  std::map<int, std::pair<int, compile::TransformSql>> cache_;
};

}  // namespace trellis::apply
