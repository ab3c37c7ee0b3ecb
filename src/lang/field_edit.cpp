// Applies ALTER TRANSFORM clauses to a list of fields. Columns keep their
// place in the target: unchanged and altered fields stay where they were,
// and added ones (including one dropped and added back with another
// expression, whose column is re-created) go at the end, as ALTER TABLE ...
// ADD COLUMN puts them.
#include "lang/field_edit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "trellis/error.hpp"

namespace trellis::lang {

namespace {

std::vector<Field>::iterator find_field(std::vector<Field>& fields, const std::string& name) {
  return std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.name == name; });
}

const Field* stored_field(const TransformStmt& stored, const std::string& name) {
  for (const auto& f : stored.fields)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace

FieldEdit edit_fields(const TransformStmt& stored, const AlterTransformStmt& alter,
                      const std::string& target_name) {
  std::vector<Field> working = stored.fields;
  std::set<std::string> dropped_here;  // names a DROP clause removed
  for (const auto& clause : alter.clauses) {
    auto it = find_field(working, clause.name);
    switch (clause.kind) {
      case AlterClause::Kind::add:
        if (it != working.end()) {
          if (it->expr.sql == clause.expr->sql) break;
          throw Error(ErrorCode::validation,
                      fmt::format("transform {} already has a field \"{}\"; use ALTER {} AS "
                                  "expr to change its expression (or DROP {} first)",
                                  target_name, clause.name, clause.name, clause.name));
        }
        working.push_back(Field{clause.name, *clause.expr, clause.position});
        break;
      case AlterClause::Kind::drop:
        if (it == working.end()) break;
        working.erase(it);
        dropped_here.insert(clause.name);
        break;
      case AlterClause::Kind::alter:
        if (it == working.end())
          throw Error(ErrorCode::validation,
                      fmt::format("transform {} has no field \"{}\" to ALTER; use ADD expr AS {} "
                                  "to add it",
                                  target_name, clause.name, clause.name));
        it->expr = *clause.expr;
        break;
    }
  }

  FieldEdit edit;
  edit.edited = stored;
  edit.edited.fields.clear();
  std::vector<Field> appended;
  for (const auto& f : working) {
    const Field* before = stored_field(stored, f.name);
    bool same = before && before->expr.sql == f.expr.sql;
    if (before && !same && dropped_here.count(f.name)) {
      edit.dropped.push_back(f.name);  // re-created: its type may change
      edit.added.push_back(f.name);
      appended.push_back(f);
    } else if (before) {
      if (!same) edit.altered.push_back(f.name);
    } else {
      edit.added.push_back(f.name);
      appended.push_back(f);
    }
  }
  // Kept and altered fields in their stored order, then the new columns.
  for (const auto& f : stored.fields) {
    auto it = find_field(working, f.name);
    if (it == working.end()) {
      edit.dropped.push_back(f.name);
    } else if (std::none_of(appended.begin(), appended.end(),
                            [&](const Field& a) { return a.name == f.name; })) {
      edit.edited.fields.push_back(*it);
    }
  }
  for (auto& f : appended) edit.edited.fields.push_back(std::move(f));
  return edit;
}

}  // namespace trellis::lang
