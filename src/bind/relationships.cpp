// Relationships at define; see relationships.hpp.
#include "bind/relationships.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/sql_text.hpp"
#include "bind/joins.hpp"
#include "bind/refusal.hpp"
#include "lang/expression.hpp"

namespace trellis::bind {

namespace {

std::string address_text(const lang::ColumnAddress& a, const std::string& schema) {
  return schema + "." + a.table.name + "." + a.column;
}

const DescribedColumn& end_column(const TableDescription& t, const lang::ColumnAddress& a,
                                  const std::string& side) {
  const DescribedColumn* c = t.find(a.column);
  if (!c) {
    std::string columns;
    for (const auto& col : t.columns) columns += (columns.empty() ? "" : ", ") + col.column.name;
    refuse(ErrorCode::validation,
           fmt::format("RELATIONSHIP {} column \"{}\" does not exist in {}.{} (columns: {})", side,
                       a.column, t.schema, t.name, columns));
  }
  return *c;
}

TableDescription end_table(pg::Connection& conn, const lang::ColumnAddress& a,
                           const std::string& default_schema, const std::string& side) {
  std::string schema = a.table.schema.value_or(default_schema);
  auto t = describe_table(conn, schema, a.table.name);
  if (!t)
    refuse(ErrorCode::not_found,
           fmt::format("RELATIONSHIP {} table {}.{} does not exist; create it first or qualify "
                       "the name as schema.table.column",
                       side, schema, a.table.name));
  check_capturable(*t, side == "FROM" ? "source" : "joined table");
  return *t;
}

bool to_one(const TableDescription& to, const DescribedColumn& col) {
  if (to.primary_key == std::vector<std::string>{col.column.name}) return true;
  if (!col.not_null) return false;
  return std::any_of(to.unique_keys.begin(), to.unique_keys.end(),
                     [&](const auto& k) { return k == std::vector<std::string>{col.column.name}; });
}

// Every qualifier the statement's expressions use, with the first position
// it is used at.
std::map<std::string, int> qualifiers(const lang::TransformStmt& stmt) {
  std::map<std::string, int> out;
  auto add = [&](const lang::Expr& e) {
    for (const auto& ref : e.columns)
      if (ref.qualifier && !out.count(*ref.qualifier)) out[*ref.qualifier] = ref.position;
  };
  for (const auto& g : stmt.group_by) add(g.expr);
  for (const auto& f : stmt.fields) add(f.expr);
  if (stmt.where) add(*stmt.where);
  return out;
}

std::string listed(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool reads_alias(const lang::Expr& e, const std::set<std::string>& aliases) {
  return std::any_of(e.columns.begin(), e.columns.end(), [&](const lang::ColumnRef& r) {
    return r.qualifier && aliases.count(*r.qualifier);
  });
}

lang::Expr column_expr(const std::string& alias, const std::string& column) {
  std::string text = base::ident(alias) + "." + base::ident(column);
  return lang::parse_expression(text, 0, text.size());
}

// A statement without GROUP BY whose fields aggregate over a to-many
// relationship keeps one row per source row: it is grouped by the source
// key, and every field that aggregates nothing is grouped with it (it has
// one value per source row), so the target holds the key, those fields and
// the aggregates.
lang::TransformStmt per_source_row(const lang::TransformStmt& stmt, const TableDescription& src,
                                   const std::string& alias, const std::vector<std::string>& key,
                                   const std::set<std::string>& to_many) {
  lang::TransformStmt out = stmt;
  out.fields.clear();
  for (const auto& k : key) {
    lang::GroupItem g;
    g.expr = column_expr(alias, k);
    out.group_by.push_back(std::move(g));
  }
  for (const auto& f : stmt.fields) {
    if (f.expr.has_aggregate_call) {
      if (f.expr.sql.find("count(*)") != std::string::npos)
        refuse(ErrorCode::validation,
               fmt::format("field \"{}\" at {} counts rows with COUNT(*), which counts a source "
                           "row without a match of {} as 1; count a column of the relationship "
                           "instead (COUNT(<relationship>.<column>) counts such a row as 0)",
                           f.name, where_at(stmt, f.expr.position), listed(to_many)));
      out.fields.push_back(f);
      continue;
    }
    bool itself = f.expr.is_column && f.expr.columns.size() == 1 &&
                  f.expr.columns[0].column == f.name &&
                  (!f.expr.columns[0].qualifier || *f.expr.columns[0].qualifier == alias);
    if (!itself && src.find(f.name))
      refuse(ErrorCode::validation,
             fmt::format("field \"{}\" at {} takes the name of a column of {}.{}; in a transform "
                         "that aggregates a to-many relationship each other field is kept per "
                         "source row beside the source's own columns, so name it differently",
                         f.name, where_at(stmt, f.expr.position), src.schema, src.name));
    lang::GroupItem g;
    g.expr = f.expr;
    g.name = f.name;
    g.name_position = f.name_position;
    out.group_by.push_back(std::move(g));
  }
  return out;
}

}  // namespace

catalog::Relationship bind_relationship(pg::Connection& conn, const lang::RelationshipStmt& stmt,
                                        const std::string& default_schema) {
  if (stmt.name.rfind("__", 0) == 0)
    refuse(ErrorCode::validation,
           fmt::format("relationship name \"{}\" starts with \"__\", which Trellis reserves; "
                       "pick another name",
                       stmt.name));
  if (stmt.name == stmt.from.table.name)
    refuse(ErrorCode::validation,
           fmt::format("relationship name \"{}\" is the name of its FROM table, so {}.column "
                       "would be ambiguous in a transform; pick another name",
                       stmt.name, stmt.name));
  TableDescription from = end_table(conn, stmt.from, default_schema, "FROM");
  TableDescription to = end_table(conn, stmt.to, default_schema, "TO");
  const DescribedColumn& fc = end_column(from, stmt.from, "FROM");
  const DescribedColumn& tc = end_column(to, stmt.to, "TO");
  std::string from_text = address_text(stmt.from, from.schema);
  std::string to_text = address_text(stmt.to, to.schema);
  if (fc.column.type != tc.column.type || fc.column.collation != tc.column.collation)
    refuse(ErrorCode::validation,
           fmt::format("RELATIONSHIP {} links {} ({}{}) to {} ({}{}); the columns need one type "
                       "and collation (Trellis never casts a join column)",
                       stmt.name, from_text, fc.column.type,
                       fc.column.collation.empty() ? "" : " COLLATE " + fc.column.collation,
                       to_text, tc.column.type,
                       tc.column.collation.empty() ? "" : " COLLATE " + tc.column.collation));
  if (!fc.deterministic || !tc.deterministic)
    refuse(ErrorCode::validation,
           fmt::format("RELATIONSHIP {} links {} to {} under a nondeterministic collation; "
                       "use a deterministic one",
                       stmt.name, from_text, to_text));
  if (!fc.column.comparable)
    refuse(ErrorCode::validation,
           fmt::format("RELATIONSHIP {} links columns of type {}, which has no equality; link "
                       "columns of a type with one",
                       stmt.name, fc.column.type));
  catalog::Relationship r;
  r.name = stmt.name;
  r.from_schema = from.schema;
  r.from_table = from.name;
  r.from_col = fc.column.name;
  r.to_schema = to.schema;
  r.to_table = to.name;
  r.to_col = tc.column.name;
  r.to_one = to_one(to, tc);
  return r;
}

lang::TransformStmt expand_relationships(pg::Connection& conn, catalog::Relationships& rels,
                                         const lang::TransformStmt& stmt,
                                         const TableDescription& src, const std::string& alias,
                                         const std::vector<std::string>& key) {
  std::set<std::string> aliases{alias};
  for (const auto& j : stmt.joins) aliases.insert(j.alias.value_or(j.table.name));
  lang::TransformStmt out = stmt;
  std::set<std::string> to_many;
  for (const auto& [name, position] : qualifiers(stmt)) {
    if (aliases.count(name)) continue;
    auto rel = rels.find(conn, src.schema, src.name, name);
    if (!rel) continue;  // an unknown name: binding refuses it
    lang::JoinClause j;
    j.left_outer = true;
    j.table = lang::QualifiedName{rel->to_schema, rel->to_table};
    j.alias = name;
    j.position = position;
    lang::JoinEquality on;
    on.left = {name, rel->to_col, position};
    on.right = {alias, rel->from_col, position};
    j.on.push_back(on);
    out.joins.push_back(std::move(j));
    if (!rel->to_one) to_many.insert(name);
  }
  if (to_many.empty()) return out;
  for (const auto& f : stmt.fields)
    if (!f.expr.has_aggregate_call && reads_alias(f.expr, to_many))
      refuse(ErrorCode::validation,
             fmt::format("field \"{}\" at {} reads a to-many relationship ({}) outside an "
                         "aggregate; wrap it in one (COUNT, SUM, STRING_AGG, ...), or JOIN the "
                         "table to get one row per match",
                         f.name, where_at(stmt, f.expr.position), listed(to_many)));
  if (stmt.where && reads_alias(*stmt.where, to_many))
    refuse(ErrorCode::validation,
           fmt::format("the WHERE predicate at {} reads a to-many relationship ({}), which has "
                       "any number of rows per source row; filter inside an aggregate instead "
                       "(COUNT(...) FILTER (WHERE ...)), or JOIN the table",
                       where_at(stmt, stmt.where->position), listed(to_many)));
  bool aggregates = std::any_of(stmt.fields.begin(), stmt.fields.end(),
                                [](const lang::Field& f) { return f.expr.has_aggregate_call; });
  if (stmt.group_by.empty() && aggregates) return per_source_row(out, src, alias, key, to_many);
  return out;
}

}  // namespace trellis::bind
