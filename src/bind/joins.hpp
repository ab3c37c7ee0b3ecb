// Binding of a definition's joins and of the names its expressions use
// (README, "The statement language", joins): which table each alias is,
// which side of each ON equality is the joined table, that every join is
// to-one (its ON covers the joined table's primary key) or fans out, that equated
// columns have one type, which columns each table is read for, and which
// index finds the rows a change of a joined table reaches.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "bind/table_description.hpp"
#include "catalog/definition.hpp"
#include "catalog/store.hpp"
#include "lang/statement.hpp"
#include "pg/connection.hpp"

namespace trellis::bind {

// The tables an expression may read, by alias: the source first, then each
// joined table in FROM order.
struct Scope {
  struct Entry {
    std::string alias;
    TableDescription table;
  };
  std::vector<Entry> tables;
  // Columns read per alias (filled by resolve()).
  std::map<std::string, std::set<std::string>> read;

  const Entry* find(const std::string& alias) const;
  // Checks every column reference of `expr` (`what` names it in messages)
  // and records the column as read of the table it resolves to.
  void resolve(const lang::TransformStmt& stmt, const lang::Expr& expr, const std::string& what);
  // The alias a reference resolve() accepted reads.
  const std::string& alias_of(const lang::ColumnRef& ref) const;
};

// Reads and checks the joined tables (`default_schema` for unqualified
// names), appending each to `scope` and filling def.joins (table ids of
// tables already captured; a new one is registered at define).
void bind_joins(pg::Connection& conn, catalog::Store& store, const lang::TransformStmt& stmt,
                const std::string& default_schema, Scope& scope, catalog::TransformDef& def);

// After every expression is resolved: each join's reads (its key, its ON
// columns and what the expressions read of it).
void finish_join_reads(const Scope& scope, catalog::TransformDef& def);

// The LEFT JOINs that fan out or are held (JoinDef::fans, JoinDef::held)
// under which the WHERE reads a column, of the join itself or of a join
// hanging off it, by alias in FROM order (TransformDef::rejecting_joins):
// such a WHERE can reject a match and pass the row without a match, and a
// change of a matched row finds the rows it matched only through what the
// target (or ledger) holds, so the matches it rejects are kept beside them
// (docs/architecture.md, "Matches a WHERE rejects").
std::vector<std::string> where_rejecting_joins(const lang::TransformStmt& stmt, const Scope& scope,
                                               const catalog::TransformDef& def);

// The indexes a join needs: on each table its ON reads, the columns the
// joined table's key is equated with (all its ON columns when it fans out),
// which find the rows a change of it reaches; and for a join that fans out,
// on the joined table's ON columns, which find its rows of a source row.
struct JoinIndexNeed {
  std::string role;    // "join:<alias>"
  std::string alias;   // the table the index is on, by alias
  std::string schema;  // and by name
  std::string table;
  std::vector<std::string> columns;
  // What the index does, for the refusal ("finds the rows ...").
  std::string finds;
};
std::vector<JoinIndexNeed> join_index_needs(const catalog::TransformDef& def);
std::string join_index_suggestion(const JoinIndexNeed& need);

// Refuses a definition whose joins lack such an index (unless WITHOUT SOURCE INDEX).
void check_join_indexes(const Scope& scope, const catalog::TransformDef& def);

}  // namespace trellis::bind

namespace trellis::bind {
// What keeps a table from being read by a transform (not a plain table, in
// a hierarchy, row-level security, written by a subscription); `role` is
// "source" or "joined table".
void check_capturable(const TableDescription& info, const std::string& role);
}  // namespace trellis::bind
