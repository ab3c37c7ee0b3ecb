// Join binding; see joins.hpp. Every refusal names the join by its alias and
// table and the statement position of the part at fault.
#include "bind/joins.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "base/sql_text.hpp"
#include "bind/refusal.hpp"
#include "trellis/error.hpp"

namespace trellis::bind {

using catalog::Column;
using catalog::JoinDef;
using catalog::TransformDef;

namespace {

std::string qualified_text(const TableDescription& t) {
  return t.schema + "." + t.name;
}

std::string column_list(const TableDescription& t) {
  std::string out;
  for (const auto& c : t.columns) out += (out.empty() ? "" : ", ") + c.column.name;
  return out;
}

// "(columns: ...)" of t, for a refusal of `missing`, which t lacks; when
// it differs from one of t's columns only in case, the fix: SQL folds an
// unquoted name to lower case, so a name with capitals must be quoted.
std::string columns_of(const TableDescription& t, const std::string& missing) {
  std::string out = "(columns: " + column_list(t) + ")";
  auto lower = [](std::string s) {
    for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  };
  for (const auto& c : t.columns)
    if (c.column.name != missing && lower(c.column.name) == lower(missing))
      return out +
             fmt::format("; write \"{}\" in double quotes to keep its capitals", c.column.name);
  return out;
}

std::string aliases(const Scope& scope) {
  std::string out;
  for (const auto& e : scope.tables) out += (out.empty() ? "" : ", ") + e.alias;
  return out;
}

std::string type_text(const Column& c) {
  return c.collation.empty() ? c.type : c.type + " COLLATE " + c.collation;
}

}  // namespace

void check_capturable(const TableDescription& info, const std::string& role) {
  std::string name = qualified_text(info);
  if (info.relkind != 'r' && !info.partitioned())
    refuse(ErrorCode::validation,
           fmt::format("{} {} is not a table (relkind '{}'); transforms read ordinary and "
                       "partitioned tables only",
                       role, name, info.relkind));
  if (!info.partition_of.empty())
    refuse(ErrorCode::validation,
           fmt::format("{} {} is a partition of {}; a write through {} does not fire the "
                       "partition's own statement triggers, so Trellis captures partitioned "
                       "tables from their root: read {} instead (with a WHERE on its "
                       "partition key for this partition's rows)",
                       role, name, info.partition_of, info.partition_of, info.partition_of));
  if (info.inherits)
    refuse(ErrorCode::validation,
           fmt::format("{} {} is part of a table inheritance hierarchy (INHERITS), whose "
                       "children's rows a read of the parent includes but whose writes fire "
                       "only their own triggers; Trellis cannot capture it. Use a plain or a "
                       "partitioned table",
                       role, name));
  if (info.rls_applies)
    refuse(ErrorCode::validation,
           fmt::format("row-level security on {} {} applies to Trellis's role; disable "
                       "it, or run Trellis as the table owner or a BYPASSRLS role",
                       role, name));
  if (info.subscribed)
    refuse(ErrorCode::validation,
           fmt::format("{} {} is written by a logical-replication subscription; "
                       "Trellis cannot capture it",
                       role, name));
}

const Scope::Entry* Scope::find(const std::string& alias) const {
  for (const auto& e : tables)
    if (e.alias == alias) return &e;
  return nullptr;
}

void Scope::resolve(const lang::TransformStmt& stmt, const lang::Expr& expr,
                    const std::string& what) {
  const bool single = tables.size() == 1;
  for (const auto& ref : expr.columns) {
    std::string at = where_at(stmt, ref.position);
    if (ref.qualifier) {
      const Entry* e = find(*ref.qualifier);
      if (!e && single)
        refuse(ErrorCode::validation,
               fmt::format("{} at {} refers to \"{}.{}\", but the only table in scope is \"{}\"; "
                           "write {}.{} or just {} (or declare a RELATIONSHIP of that name)",
                           what, at, *ref.qualifier, ref.column, tables[0].alias, tables[0].alias,
                           ref.column, ref.column));
      if (!e) {
        for (const auto& t : tables)
          if (t.table.name == *ref.qualifier)
            refuse(ErrorCode::validation,
                   fmt::format("{} at {} refers to \"{}.{}\", but table {} has the alias \"{}\" "
                               "here; write {}.{}",
                               what, at, *ref.qualifier, ref.column, qualified_text(t.table),
                               t.alias, t.alias, ref.column));
        refuse(ErrorCode::validation,
               fmt::format("{} at {} refers to \"{}.{}\", but no table in scope is named \"{}\" "
                           "(tables in scope: {}) and the source has no RELATIONSHIP of that name",
                           what, at, *ref.qualifier, ref.column, *ref.qualifier, aliases(*this)));
      }
      if (!e->table.find(ref.column))
        refuse(ErrorCode::validation,
               fmt::format("{} at {} refers to column \"{}\", which does not exist in {}.{} {}",
                           what, at, ref.column, e->table.schema, e->table.name,
                           columns_of(e->table, ref.column)));
      read[e->alias].insert(ref.column);
      continue;
    }
    std::vector<const Entry*> candidates;
    for (const auto& e : tables)
      if (e.table.find(ref.column)) candidates.push_back(&e);
    if (candidates.empty() && single)
      refuse(ErrorCode::validation,
             fmt::format("{} at {} refers to column \"{}\", which does not exist in {}.{} {}", what,
                         at, ref.column, tables[0].table.schema, tables[0].table.name,
                         columns_of(tables[0].table, ref.column)));
    if (candidates.empty())
      refuse(ErrorCode::validation,
             fmt::format("{} at {} refers to column \"{}\", which no table in scope has (tables "
                         "in scope: {})",
                         what, at, ref.column, aliases(*this)));
    if (candidates.size() > 1) {
      std::string names;
      for (const auto* e : candidates)
        names += (names.empty() ? "" : ", ") + e->alias + "." + ref.column;
      refuse(ErrorCode::validation,
             fmt::format("{} at {} refers to column \"{}\", which is ambiguous: it may be {}; "
                         "qualify it with the alias",
                         what, at, ref.column, names));
    }
    read[candidates[0]->alias].insert(ref.column);
  }
}

const std::string& Scope::alias_of(const lang::ColumnRef& ref) const {
  for (const auto& e : tables)
    if (ref.qualifier ? e.alias == *ref.qualifier : e.table.find(ref.column) != nullptr)
      return e.alias;
  return tables.front().alias;
}

namespace {

// The ON equality's two sides as (joined column, other alias, other column).
JoinDef::Equality orient(const lang::TransformStmt& stmt, const lang::JoinEquality& eq,
                         const std::string& alias, const Scope& scope, const std::string& join) {
  const lang::ColumnRef* mine = nullptr;
  const lang::ColumnRef* other = nullptr;
  if (eq.left.qualifier == alias && eq.right.qualifier != alias) mine = &eq.left, other = &eq.right;
  if (eq.right.qualifier == alias && eq.left.qualifier != alias) mine = &eq.right, other = &eq.left;
  std::string at = where_at(stmt, eq.left.position);
  if (!mine)
    refuse(ErrorCode::validation,
           fmt::format("ON of {} at {} equates {}.{} with {}.{}; each equality must equate a "
                       "column of \"{}\" with a column of a table before it ({})",
                       join, at, *eq.left.qualifier, eq.left.column, *eq.right.qualifier,
                       eq.right.column, alias, aliases(scope)));
  if (!scope.find(*other->qualifier))
    refuse(ErrorCode::validation,
           fmt::format("ON of {} at {} refers to \"{}.{}\", but no table before it is named "
                       "\"{}\" (tables before it: {})",
                       join, where_at(stmt, other->position), *other->qualifier, other->column,
                       *other->qualifier, aliases(scope)));
  return {mine->column, *other->qualifier, other->column};
}

void check_equality_types(const lang::TransformStmt& stmt, const lang::JoinEquality& eq,
                          const JoinDef::Equality& e, const std::string& alias,
                          const TableDescription& joined, const Scope& scope,
                          const std::string& join) {
  std::string at = where_at(stmt, eq.left.position);
  const auto* mine = joined.find(e.column);
  if (!mine)
    refuse(ErrorCode::validation,
           fmt::format("ON of {} at {} refers to column \"{}\", which does not exist in {} {}",
                       join, at, e.column, qualified_text(joined), columns_of(joined, e.column)));
  const auto& other_table = scope.find(e.other_alias)->table;
  const auto* other = other_table.find(e.other_column);
  if (!other)
    refuse(ErrorCode::validation,
           fmt::format("ON of {} at {} refers to column \"{}\", which does not exist in {} {}",
                       join, at, e.other_column, qualified_text(other_table),
                       columns_of(other_table, e.other_column)));
  if (type_text(mine->column) != type_text(other->column))
    refuse(ErrorCode::validation,
           fmt::format("ON of {} at {} equates {}.{} ({}) with {}.{} ({}); joined columns need "
                       "one type, since an implicit cast would keep indexes from finding the "
                       "rows a change reaches; change one column's type or join on other columns",
                       join, at, alias, e.column, type_text(mine->column), e.other_alias,
                       e.other_column, type_text(other->column)));
  if (!mine->deterministic || !other->deterministic)
    refuse(ErrorCode::validation,
           fmt::format("ON of {} at {} equates columns under a nondeterministic collation "
                       "({}.{}, {}.{}), under which different values match; join on columns "
                       "with a deterministic collation",
                       join, at, alias, e.column, e.other_alias, e.other_column));
}

}  // namespace

void bind_joins(pg::Connection& conn, catalog::Store& store, const lang::TransformStmt& stmt,
                const std::string& default_schema, Scope& scope, TransformDef& def) {
  for (const auto& clause : stmt.joins) {
    std::string schema = clause.table.schema.value_or(default_schema);
    std::string alias = clause.alias.value_or(clause.table.name);
    std::string at = where_at(stmt, clause.position);
    auto info = describe_table(conn, schema, clause.table.name);
    if (!info)
      refuse(ErrorCode::not_found,
             fmt::format("joined table {}.{} at {} does not exist; create it first or qualify "
                         "the name as schema.table",
                         schema, clause.table.name, at));
    std::string join = fmt::format("JOIN {} AS {}", qualified_text(*info), alias);
    check_capturable(*info, "joined table");
    if (scope.find(alias))
      refuse(ErrorCode::validation,
             fmt::format("{} at {} uses alias \"{}\", which an earlier table already has; give "
                         "each table of the FROM clause its own alias",
                         join, at, alias));
    if (alias.rfind("__", 0) == 0)
      refuse(ErrorCode::validation,
             fmt::format("{} at {}: alias \"{}\" starts with \"__\", which Trellis reserves", join,
                         at, alias));
    if (info->primary_key.empty())
      refuse(ErrorCode::validation,
             fmt::format("joined table {} at {} has no primary key; add one (a change of the "
                         "table is found by it)",
                         qualified_text(*info), at));
    JoinDef j;
    j.left_outer = clause.left_outer;
    j.schema = info->schema;
    j.table = info->name;
    j.alias = alias;
    for (const auto& k : info->primary_key) j.key.push_back(info->find(k)->column);
    for (const auto& eq : clause.on) {
      auto e = orient(stmt, eq, alias, scope, join);
      check_equality_types(stmt, eq, e, alias, *info, scope, join);
      j.on.push_back(e);
    }
    auto covered = [&](const std::vector<std::string>& columns) {
      return std::all_of(columns.begin(), columns.end(), [&](const std::string& k) {
        return std::any_of(j.on.begin(), j.on.end(),
                           [&](const JoinDef::Equality& e) { return e.column == k; });
      });
    };
    j.fans = !covered(info->primary_key);
    // A unique key the ON covers (NULLs never match, so no key column need
    // be NOT NULL) makes the join to-one as well; validate_transform keeps
    // it so (`held`) for a 1-1 transform only.
    j.held = j.fans && std::any_of(info->unique_keys.begin(), info->unique_keys.end(), covered);
    if (auto captured = store.captured_table(conn, j.schema, j.table)) {
      bool same = captured->key.size() == j.key.size();
      for (size_t i = 0; same && i < j.key.size(); ++i)
        same = captured->key[i].name == j.key[i].name;
      if (!same)
        refuse(ErrorCode::validation,
               fmt::format("joined table {} at {} is captured keyed by a KEY other than its "
                           "primary key (another transform reads it so); join another table or "
                           "key that transform by the primary key",
                           qualified_text(*info), at));
      j.table_id = captured->id;
    }
    if (auto upstream = store.transform(conn, j.schema, j.table);
        upstream && upstream->status != catalog::Status::live && upstream->id != def.id)
      refuse(ErrorCode::validation,
             fmt::format("joined table {} is the target of a transform that is {} and not "
                         "live; wait until it is live (trellis await) and define this again",
                         upstream->target_name(), catalog::name(upstream->status)));
    for (const auto& e : j.on) {
      scope.read[alias].insert(e.column);
      scope.read[e.other_alias].insert(e.other_column);
    }
    def.joins.push_back(std::move(j));
    scope.tables.push_back({alias, std::move(*info)});
  }
}

void finish_join_reads(const Scope& scope, TransformDef& def) {
  for (auto& j : def.joins) {
    const auto& table = scope.find(j.alias)->table;
    std::set<std::string> names;
    for (const auto& k : j.key) names.insert(k.name);
    auto it = scope.read.find(j.alias);
    if (it != scope.read.end()) names.insert(it->second.begin(), it->second.end());
    j.reads.clear();
    for (const auto& n : names) j.reads.push_back(table.find(n)->column);
  }
}

std::vector<std::string> where_rejecting_joins(const lang::TransformStmt& stmt, const Scope& scope,
                                               const TransformDef& def) {
  if (!stmt.where) return {};
  // Each alias under a LEFT JOIN that fans out or is held: that join's.
  std::map<std::string, std::string> under;
  for (const auto& j : def.joins) {
    if (j.left_outer && (j.fans || j.held)) under[j.alias] = j.alias;
    for (const auto& e : j.on)
      if (auto it = under.find(e.other_alias); it != under.end() && !under.count(j.alias))
        under[j.alias] = it->second;
  }
  std::set<std::string> read;
  for (const auto& ref : stmt.where->columns)
    if (auto it = under.find(scope.alias_of(ref)); it != under.end()) read.insert(it->second);
  std::vector<std::string> out;
  for (const auto& j : def.joins)
    if (read.count(j.alias)) out.push_back(j.alias);
  return out;
}

std::vector<JoinIndexNeed> join_index_needs(const TransformDef& def) {
  std::vector<JoinIndexNeed> out;
  auto table_of = [&](const std::string& alias, JoinIndexNeed& need) {
    need.schema = def.source_schema, need.table = def.source_table;
    for (const auto& other : def.joins)
      if (other.alias == alias) need.schema = other.schema, need.table = other.table;
  };
  for (const auto& j : def.joins) {
    std::string role = "join:" + j.alias;
    // A join that fans out finds its rows of each source row by its ON
    // columns, and a change of one of them reaches the rows before it
    // through all its ON equalities; a to-one join's change reaches them
    // through the equalities over its key.
    std::map<std::string, std::vector<std::string>> by_alias;
    std::vector<std::string> own;
    for (const auto& e : j.on) {
      bool over_key = std::any_of(j.key.begin(), j.key.end(),
                                  [&](const Column& k) { return k.name == e.column; });
      if (j.fans) own.push_back(e.column);
      if (j.fans || j.held || over_key) by_alias[e.other_alias].push_back(e.other_column);
    }
    if (!own.empty()) {
      JoinIndexNeed need{role,
                         j.alias,
                         j.schema,
                         j.table,
                         own,
                         fmt::format("finds the rows of the table joined as \"{}\" that each "
                                     "source row matches",
                                     j.alias)};
      out.push_back(std::move(need));
    }
    for (auto& [alias, columns] : by_alias) {
      JoinIndexNeed need{role,
                         alias,
                         "",
                         "",
                         columns,
                         fmt::format("finds the rows a change of the table joined as \"{}\" "
                                     "reaches",
                                     j.alias)};
      table_of(alias, need);
      out.push_back(std::move(need));
    }
  }
  return out;
}

std::string join_index_suggestion(const JoinIndexNeed& need) {
  return fmt::format("CREATE INDEX ON {} ({})", base::qualified(need.schema, need.table),
                     base::join<std::string>(need.columns, ", ",
                                             [](const std::string& c) { return base::ident(c); }));
}

void check_join_indexes(const Scope& scope, const TransformDef& def) {
  for (const auto& need : join_index_needs(def)) {
    const auto& table = scope.find(need.alias)->table;
    if (table.has_index_leading_with(need.columns)) continue;
    refuse(ErrorCode::validation,
           fmt::format("{}.{} has no index leading with ({}), which {}; create one with {}, or "
                       "add WITHOUT SOURCE INDEX before SELECT to go without",
                       need.schema, need.table, fmt::join(need.columns, ", "), need.finds,
                       join_index_suggestion(need)));
  }
}

}  // namespace trellis::bind
