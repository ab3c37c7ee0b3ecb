// The statement language's syntax tree (README, "The statement language"), as produced by the
// parser. It holds only what the text says; names are resolved and types checked later against the
// live database (bind/validate).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace trellis::lang {

// [schema.]name with PostgreSQL identifier folding already applied.
struct QualifiedName {
  std::optional<std::string> schema;
  std::string name;
};

// A column reference found inside an expression: `col` or `qualifier.col`.
struct ColumnRef {
  std::optional<std::string> qualifier;
  std::string column;
  int position = 0;  // 0-based byte offset in the statement text
};

// One scalar expression, parsed by PostgreSQL's own grammar (libpg_query),
// checked against the node allowlist and re-rendered from its parse tree.
struct Expr {
  std::string sql;   // canonical SQL deparsed from the parse tree (never the raw text)
  std::string text;  // the user's text, for messages only
  int position = 0;  // 0-based byte offset of `text` in the statement
  std::vector<ColumnRef> columns;
  std::vector<std::string> function_names;  // lower-case, unqualified, as written
  bool has_aggregate_call = false;          // a call to a known aggregate name appears
  bool is_column = false;                   // the whole expression is one column reference
};

struct Field {
  std::string name;  // output column name (folded)
  Expr expr;
  int name_position = 0;
};

// One GROUP BY item: an expression, named with `AS name` (required unless it
// is a plain column, which names itself).
struct GroupItem {
  Expr expr;
  std::optional<std::string> name;  // folded
  int name_position = 0;
};

// One equality of a join's ON: `left = right`, each `alias.column` (the
// parser does not know which side is the joined table; bind does).
struct JoinEquality {
  ColumnRef left;
  ColumnRef right;
};

// `[INNER] JOIN table [AS] alias ON a.col = b.col [AND ...]`, or LEFT [OUTER].
struct JoinClause {
  bool left_outer = false;
  QualifiedName table;
  std::optional<std::string> alias;
  std::vector<JoinEquality> on;
  int position = 0;  // of the JOIN (or LEFT/INNER) word
};

struct TransformStmt {
  QualifiedName target;
  bool adopt_existing = false;
  QualifiedName source;
  std::optional<std::string> alias;
  std::vector<std::string> key_columns;  // KEY (...); empty when absent
  std::vector<JoinClause> joins;         // in the order written
  std::vector<GroupItem> group_by;       // GROUP BY; empty for 1-1 and for one-row aggregates
  bool without_source_index = false;
  std::vector<Field> fields;
  std::optional<Expr> where;
  std::string text;  // the statement as given
};

struct PauseStmt {
  QualifiedName target;
  std::optional<std::string> column;
};

struct ResumeStmt {
  QualifiedName target;
  std::optional<std::string> column;
};

struct DropTransformStmt {
  QualifiedName target;
};

// One clause of ALTER TRANSFORM: ADD expr AS name | DROP name | ALTER name AS expr.
struct AlterClause {
  enum class Kind { add, drop, alter };
  Kind kind = Kind::add;
  std::string name;          // the field (folded)
  std::optional<Expr> expr;  // add and alter
  int position = 0;          // 0-based byte offset of the clause
};

struct AlterTransformStmt {
  QualifiedName target;
  std::vector<AlterClause> clauses;  // in the order written; applied in that order
  std::string text;
};

// `[schema.]table.column`: one end of a relationship.
struct ColumnAddress {
  QualifiedName table;
  std::string column;
  int position = 0;
};

// RELATIONSHIP name FROM [schema.]table.col TO [schema.]table.col
struct RelationshipStmt {
  std::string name;  // folded
  ColumnAddress from;
  ColumnAddress to;
};

// DROP RELATIONSHIP [schema.]from_table.name
struct DropRelationshipStmt {
  QualifiedName from_table;
  std::string name;
};

using Statement = std::variant<TransformStmt, PauseStmt, ResumeStmt, DropTransformStmt,
                               AlterTransformStmt, RelationshipStmt, DropRelationshipStmt>;

// Parses exactly one statement. Throws trellis::Error(parse) with the
// 1-based line:column of the offending token and what was expected.
Statement parse_statement(const std::string& text);

// Splits a file holding several statements separated by `;` (respecting
// quotes, comments and parentheses). Empty statements are dropped.
std::vector<std::string> split_statements(const std::string& text);

}  // namespace trellis::lang
