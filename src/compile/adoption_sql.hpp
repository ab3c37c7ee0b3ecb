// ADOPT EXISTING TABLE as SQL: what Trellis adds to an adopted target (the
// hidden columns, keys and indexes of the table define would create that the
// existing table lacks), and what DROP TRANSFORM removes from it again,
// leaving the table itself in place.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/definition.hpp"

namespace trellis::compile {

struct AddedColumn {
  catalog::Column column;
  bool not_null = false;
  std::optional<std::string> default_sql;  // PostgreSQL's text of the default define gives it
};

// A key or index define creates on the target: PRIMARY KEY, UNIQUE [NULLS NOT
// DISTINCT] or a plain index, over plain columns in order.
struct AddedIndex {
  std::vector<std::string> columns;
  bool primary = false;
  bool unique = false;
  bool nulls_not_distinct = false;
};

struct TargetAdditions {
  std::vector<AddedColumn> columns;
  std::vector<AddedIndex> indexes;
};

// Locks def's (existing) target for the adoption's transaction: its
// emptiness is read, and its shape compared, under that lock.
std::string lock_adopted_target(const catalog::TransformDef& def);

// The statements that add `additions` to def's (existing) target.
std::vector<std::string> adopt_target_sql(const catalog::TransformDef& def,
                                          const TargetAdditions& additions);

// DROP TRANSFORM of an adopted target: its side tables' drops and the
// removal of the hidden columns ADOPT added (def.adopted_columns); the
// target and its other columns stay.
std::vector<std::string> release_adopted_sql(const catalog::TransformDef& def);

}  // namespace trellis::compile
