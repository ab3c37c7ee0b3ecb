// ALTER TRANSFORM's edit of a 1-1 definition's SELECT list (README, "The statement language"),
// before anything is resolved: the clauses apply in the order written to the
// stored statement's fields, and the result says which target columns are
// new, which go away and which keep their column but change expression.
// Re-adding or re-altering to the same expression and dropping an absent
// field are no-ops and appear in none of the lists.
#pragma once

#include <string>
#include <vector>

#include "lang/statement.hpp"

namespace trellis::lang {

struct FieldEdit {
  TransformStmt edited;              // the stored statement with the new SELECT list
  std::vector<std::string> added;    // columns to add (a DROP then ADD re-creates)
  std::vector<std::string> dropped;  // columns to drop
  std::vector<std::string> altered;  // same column, new expression
  bool changed() const { return !added.empty() || !dropped.empty() || !altered.empty(); }
};

// Throws trellis::Error(validation) for an ADD of a field that exists with
// another expression or an ALTER of a field that does not exist.
FieldEdit edit_fields(const TransformStmt& stored, const AlterTransformStmt& alter,
                      const std::string& target_name);

}  // namespace trellis::lang
