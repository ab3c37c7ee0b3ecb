// The statement parser (README, "The statement language"). PostgreSQL's scanner tokenizes the text;
// this file splits it into clauses at top-level keywords and hands every
// expression to PostgreSQL's grammar (lang/expression). It also splits a
// file of several statements at top-level semicolons.
#include <algorithm>
#include <array>
#include <utility>

#include "lang/expression.hpp"
#include "lang/parse_cursor.hpp"
#include "lang/statement.hpp"
#include "lang/tokens.hpp"
#include "trellis/error.hpp"

namespace trellis::lang {
namespace {

constexpr std::string_view kStatementForms =
    "TRANSFORM, ALTER TRANSFORM, PAUSE TRANSFORM, RESUME TRANSFORM, DROP TRANSFORM, "
    "RELATIONSHIP or DROP RELATIONSHIP";

using Range = std::pair<std::size_t, std::size_t>;  // token indexes [first, last)

bool is_punct(const Token& token, std::string_view symbol) {
  return token.kind == TokenKind::punct && token.text == symbol;
}

int depth_change(const Token& token) {
  if (is_punct(token, "(") || is_punct(token, "[")) return 1;
  if (is_punct(token, ")") || is_punct(token, "]")) return -1;
  return 0;
}

// Refuses unbalanced brackets up front, so clause splitting can trust depth.
void check_brackets(const Cursor& c) {
  std::vector<const Token*> open;
  for (const Token& token : c.tokens()) {
    if (depth_change(token) > 0) {
      open.push_back(&token);
    } else if (depth_change(token) < 0) {
      bool matches = !open.empty() && (open.back()->text == "(") == (token.text == ")");
      if (!matches) c.fail_at(token.begin, "unbalanced " + describe(&token));
      open.pop_back();
    }
  }
  if (!open.empty()) c.fail_at(open.back()->begin, "unclosed " + describe(open.back()));
}

// Index of the first token from `from` at bracket depth 0 where stop(i)
// holds, or the token count when there is none.
template <class Stop>
std::size_t find_top_level(const std::vector<Token>& tokens, std::size_t from, Stop stop) {
  int depth = 0;
  for (std::size_t i = from; i < tokens.size(); ++i) {
    if (depth == 0 && stop(i)) return i;
    depth += depth_change(tokens[i]);
  }
  return tokens.size();
}

// Splits [range) at top-level commas.
std::vector<Range> split_commas(const std::vector<Token>& tokens, Range range) {
  std::vector<Range> items;
  std::size_t start = range.first;
  while (true) {
    std::size_t comma = find_top_level(tokens, start, [&](std::size_t i) {
      return i >= range.second || is_punct(tokens[i], ",");
    });
    std::size_t stop = std::min(comma, range.second);
    items.emplace_back(start, stop);
    if (stop >= range.second) return items;
    start = stop + 1;
  }
}

Expr expression_in(const Cursor& c, Range range) {
  const auto& tokens = c.tokens();
  return parse_expression(c.text(), tokens[range.first].begin, tokens[range.second - 1].end);
}

// Reads name(.name)* and returns the folded parts.
std::vector<std::string> parse_dotted(Cursor& c, std::string_view what, std::string_view after) {
  std::vector<std::string> parts{c.expect_name(what, after)};
  while (c.accept_punct(".")) parts.push_back(c.expect_name("a name", "\".\""));
  return parts;
}

QualifiedName parse_table_name(Cursor& c, std::string_view what, std::string_view after) {
  std::size_t start = c.offset_of(c.pos());
  std::vector<std::string> parts = parse_dotted(c, what, after);
  if (parts.size() > 2) {
    c.fail_at(start,
              "too many name parts (" + std::to_string(parts.size()) + ") in " + std::string(what),
              "; expected [schema.]table");
  }
  if (parts.size() == 1) return QualifiedName{std::nullopt, parts[0]};
  return QualifiedName{parts[0], parts[1]};
}

bool parse_adopt(Cursor& c) {
  if (!c.accept_word("adopt")) return false;
  c.expect_word("existing", "ADOPT");
  c.expect_word("table", "ADOPT EXISTING");
  return true;
}

bool is_join_word(const Cursor& c, std::size_t ahead) {
  static constexpr std::array<std::string_view, 7> kWords = {"join", "left",  "inner",  "right",
                                                             "full", "cross", "natural"};
  for (std::string_view word : kWords) {
    if (c.at_word(word, ahead)) return true;
  }
  return false;
}

// `[AS] alias`; KEY and WITHOUT are unreserved words that start clauses here.
std::optional<std::string> parse_alias(Cursor& c) {
  if (c.accept_word("as")) return c.expect_name("an alias", "AS");
  const Token* token = c.peek();
  if (token == nullptr || !is_name(*token) || c.at_word("key") || c.at_word("without") ||
      is_join_word(c, 0) || c.at_word("on")) {
    return std::nullopt;
  }
  return c.expect_name("an alias", "the source table");
}

std::vector<std::string> parse_key(Cursor& c) {
  std::vector<std::string> columns;
  if (!c.accept_word("key")) return columns;
  c.expect_punct("(", "KEY");
  columns.push_back(c.expect_name("a key column name", "KEY ("));
  while (c.accept_punct(",")) columns.push_back(c.expect_name("a key column name", "\",\""));
  c.expect_punct(")", "the KEY column list");
  return columns;
}

// `alias.column` in a join's ON.
ColumnRef parse_on_column(Cursor& c, std::string_view after) {
  ColumnRef ref;
  ref.position = static_cast<int>(c.offset_of(c.pos()));
  std::vector<std::string> parts = parse_dotted(c, "a column (alias.column)", after);
  if (parts.size() != 2)
    c.fail_at(static_cast<std::size_t>(ref.position), "ON column",
              " must be written alias.column (a column of the joined table or of a table "
              "before it)");
  ref.qualifier = parts[0];
  ref.column = parts[1];
  return ref;
}

// ON a.col = b.col [AND ...]: column equalities only.
std::vector<JoinEquality> parse_on(Cursor& c) {
  std::vector<JoinEquality> on;
  std::string_view after = "ON";
  do {
    JoinEquality eq;
    eq.left = parse_on_column(c, after);
    if (!c.accept_punct("="))
      c.fail_at(c.offset_of(c.pos()), "expected \"=\" in ON, found " + describe(c.peek()),
                "; a join's ON is one or more column equalities (a.col = b.col AND ...)");
    eq.right = parse_on_column(c, "\"=\"");
    on.push_back(std::move(eq));
    after = "AND";
  } while (c.accept_word("and"));
  return on;
}

// { [INNER] JOIN | LEFT [OUTER] JOIN } table [AS] alias ON ..., repeated.
std::vector<JoinClause> parse_joins(Cursor& c) {
  std::vector<JoinClause> joins;
  while (is_join_word(c, 0)) {
    JoinClause join;
    join.position = static_cast<int>(c.offset_of(c.pos()));
    for (std::string_view word : {"right", "full", "cross", "natural"})
      if (c.at_word(word))
        c.fail_at(c.offset_of(c.pos()), describe(c.peek()) + " joins are not supported",
                  "; write [INNER] JOIN or LEFT [OUTER] JOIN with an ON of column equalities");
    if (c.accept_word("left")) {
      join.left_outer = true;
      c.accept_word("outer");
    } else {
      c.accept_word("inner");
    }
    c.expect_word("join", join.left_outer ? "LEFT" : "INNER");
    join.table = parse_table_name(c, "a table name", "JOIN");
    join.alias = parse_alias(c);
    if (c.at_word("using"))
      c.fail_at(c.offset_of(c.pos()), "JOIN ... USING is not supported",
                "; write ON alias.column = alias.column");
    c.expect_word("on", "the joined table");
    join.on = parse_on(c);
    joins.push_back(std::move(join));
  }
  return joins;
}

// One GROUP BY item: `expr [AS name]`.
GroupItem parse_group_item(Cursor& c, Range item) {
  const auto& tokens = c.tokens();
  std::size_t as = find_top_level(tokens, item.first, [&](std::size_t i) {
    return i >= item.second || is_word(tokens[i], "as");
  });
  if (as == item.first) c.fail_at(tokens[as].begin, "expected an expression before AS");
  GroupItem group;
  if (as < item.second) {
    c.seek(as + 1);
    group.name_position = static_cast<int>(c.offset_of(as + 1));
    group.name = c.expect_name("a name for the GROUP BY item", "AS");
    if (c.pos() < item.second) {
      c.fail_at(tokens[c.pos()].begin, "unexpected " + describe(c.peek()),
                " after GROUP BY name \"" + *group.name + "\"; expected \",\" or SELECT");
    }
  }
  group.expr = expression_in(c, {item.first, std::min(as, item.second)});
  return group;
}

// GROUP BY items run up to WITHOUT SOURCE INDEX, SELECT or WHERE.
std::vector<GroupItem> parse_group_by(Cursor& c) {
  const auto& tokens = c.tokens();
  std::size_t end = find_top_level(tokens, c.pos(), [&](std::size_t i) {
    return is_word(tokens[i], "select") || is_word(tokens[i], "where") ||
           (is_word(tokens[i], "without") && i + 1 < tokens.size() &&
            is_word(tokens[i + 1], "source"));
  });
  if (end == c.pos()) c.fail_expected("an expression", "GROUP BY");
  std::vector<GroupItem> items;
  for (Range item : split_commas(tokens, {c.pos(), end})) {
    if (item.first == item.second) {
      c.seek(item.first);
      c.fail_expected("an expression", "\",\" in the GROUP BY list");
    }
    items.push_back(parse_group_item(c, item));
  }
  c.seek(end);
  return items;
}

void parse_without_source_index(Cursor& c) {
  c.expect_word("without", "the GROUP BY list");
  c.expect_word("source", "WITHOUT");
  c.expect_word("index", "WITHOUT SOURCE");
}

// Clauses that belong before SELECT get a precise message when found after it.
void refuse_misplaced(const Cursor& c, Range range) {
  const auto& tokens = c.tokens();
  auto at = [&](std::size_t i, std::string_view word) {
    return i < tokens.size() && is_word(tokens[i], word);
  };
  std::size_t found = find_top_level(tokens, range.first, [&](std::size_t i) {
    return i >= range.second || (at(i, "group") && at(i + 1, "by")) ||
           (at(i, "without") && at(i + 1, "source")) || at(i, "join");
  });
  if (found >= range.second) return;
  std::size_t offset = tokens[found].begin;
  if (at(found, "join"))
    c.fail_at(offset, "found JOIN",
              " after SELECT; joins come right after the FROM table (and its KEY)");
  std::string clause = at(found, "group") ? "GROUP BY" : "WITHOUT SOURCE INDEX";
  c.fail_at(offset, "found " + clause,
            " after SELECT; it must come between the FROM clause and SELECT");
}

Field parse_field(Cursor& c, Range item) {
  const auto& tokens = c.tokens();
  std::size_t as = find_top_level(tokens, item.first, [&](std::size_t i) {
    return i >= item.second || is_word(tokens[i], "as");
  });
  std::size_t start = tokens[item.first].begin;
  std::string text(c.text().substr(start, tokens[item.second - 1].end - start));
  if (as >= item.second) {
    c.fail_at(start, "field \"" + text + "\"",
              " has no name; add AS name (every SELECT item needs one)");
  }
  if (as == item.first) c.fail_at(start, "expected an expression before AS");
  c.seek(as + 1);
  Field field;
  field.name_position = static_cast<int>(c.offset_of(as + 1));
  field.name = c.expect_name("a field name", "AS");
  if (c.pos() < item.second) {
    c.fail_at(tokens[c.pos()].begin, "unexpected " + describe(c.peek()),
              " after field name \"" + field.name + "\"; expected \",\" or WHERE");
  }
  field.expr = expression_in(c, {item.first, as});
  return field;
}

std::vector<Field> parse_fields(Cursor& c) {
  const auto& tokens = c.tokens();
  std::size_t end =
      find_top_level(tokens, c.pos(), [&](std::size_t i) { return is_word(tokens[i], "where"); });
  refuse_misplaced(c, {c.pos(), tokens.size()});
  if (end == c.pos()) c.fail_expected("a field (expr AS name)", "SELECT");
  std::vector<Field> fields;
  for (Range item : split_commas(tokens, {c.pos(), end})) {
    if (item.first == item.second) {
      c.seek(item.first);
      c.fail_expected("a field (expr AS name)", "\",\"");
    }
    fields.push_back(parse_field(c, item));
  }
  c.seek(end);
  return fields;
}

std::optional<Expr> parse_where(Cursor& c) {
  if (!c.accept_word("where")) return std::nullopt;
  if (c.done()) c.fail_expected("a predicate", "WHERE");
  Expr predicate = expression_in(c, {c.pos(), c.tokens().size()});
  c.seek(c.tokens().size());
  return predicate;
}

// After SELECT-less clauses, names the clause SELECT should follow.
std::string last_clause(const TransformStmt& stmt) {
  if (stmt.without_source_index) return "WITHOUT SOURCE INDEX";
  if (!stmt.group_by.empty()) return "the GROUP BY list";
  if (!stmt.joins.empty()) return "the join's ON";
  return "FROM clause";
}

TransformStmt parse_transform(Cursor& c) {
  TransformStmt stmt;
  stmt.text = std::string(c.text());
  stmt.target = parse_table_name(c, "a target table name", "TRANSFORM");
  stmt.adopt_existing = parse_adopt(c);
  c.expect_word("from", stmt.adopt_existing ? "ADOPT EXISTING TABLE" : "the target name");
  stmt.source = parse_table_name(c, "a source table name", "FROM");
  stmt.alias = parse_alias(c);
  stmt.key_columns = parse_key(c);
  stmt.joins = parse_joins(c);
  if (c.accept_word("group")) {
    c.expect_word("by", "GROUP");
    stmt.group_by = parse_group_by(c);
  }
  if (c.at_word("without")) {
    parse_without_source_index(c);
    stmt.without_source_index = true;
  }
  // A GROUP BY without SELECT is a SELECT DISTINCT of the group items.
  bool distinct = !stmt.group_by.empty() && (c.done() || c.at_word("where"));
  if (!distinct) {
    c.expect_word("select", last_clause(stmt));
    stmt.fields = parse_fields(c);
  }
  stmt.where = parse_where(c);
  c.expect_end(distinct ? last_clause(stmt) : "the SELECT list");
  return stmt;
}

// PAUSE / RESUME address: target, target.column or schema.target.column.
template <class Stmt>
Stmt parse_address(Cursor& c, std::string_view verb) {
  std::string after = std::string(verb) + " TRANSFORM";
  c.expect_word("transform", verb);
  std::size_t start = c.offset_of(c.pos());
  std::vector<std::string> parts = parse_dotted(c, "a target name", after);
  c.expect_end("the " + after + " address");
  Stmt stmt;
  if (parts.size() == 1) {
    stmt.target.name = parts[0];
  } else if (parts.size() == 2) {
    stmt.target.name = parts[0];
    stmt.column = parts[1];
  } else if (parts.size() == 3) {
    stmt.target = QualifiedName{parts[0], parts[1]};
    stmt.column = parts[2];
  } else {
    c.fail_at(start, "too many name parts (" + std::to_string(parts.size()) + ") after " + after,
              "; expected target, target.column or schema.target.column");
  }
  return stmt;
}

// [schema.]table.column, one end of a relationship.
ColumnAddress parse_column_address(Cursor& c, std::string_view after) {
  ColumnAddress out;
  out.position = static_cast<int>(c.offset_of(c.pos()));
  std::vector<std::string> parts = parse_dotted(c, "table.column", after);
  if (parts.size() < 2 || parts.size() > 3)
    c.fail_at(static_cast<std::size_t>(out.position),
              std::to_string(parts.size()) + " name part(s) after " + std::string(after),
              "; expected [schema.]table.column");
  out.column = parts.back();
  out.table =
      parts.size() == 2 ? QualifiedName{std::nullopt, parts[0]} : QualifiedName{parts[0], parts[1]};
  return out;
}

// RELATIONSHIP name FROM [schema.]table.col TO [schema.]table.col
RelationshipStmt parse_relationship(Cursor& c) {
  RelationshipStmt stmt;
  stmt.name = c.expect_name("a relationship name", "RELATIONSHIP");
  c.expect_word("from", "the relationship name");
  stmt.from = parse_column_address(c, "FROM");
  c.expect_word("to", "the FROM column");
  stmt.to = parse_column_address(c, "TO");
  c.expect_end("the TO column");
  return stmt;
}

// DROP RELATIONSHIP [schema.]from_table.name
DropRelationshipStmt parse_drop_relationship(Cursor& c) {
  std::size_t start = c.offset_of(c.pos());
  std::vector<std::string> parts = parse_dotted(c, "from_table.name", "DROP RELATIONSHIP");
  if (parts.size() < 2 || parts.size() > 3)
    c.fail_at(start, std::to_string(parts.size()) + " name part(s) after DROP RELATIONSHIP",
              "; expected [schema.]from_table.name (a relationship is named on its FROM table)");
  c.expect_end("the DROP RELATIONSHIP address");
  DropRelationshipStmt stmt;
  stmt.name = parts.back();
  stmt.from_table =
      parts.size() == 2 ? QualifiedName{std::nullopt, parts[0]} : QualifiedName{parts[0], parts[1]};
  return stmt;
}

Statement parse_drop(Cursor& c) {
  if (c.accept_word("relationship")) return parse_drop_relationship(c);
  c.expect_word("transform", "DROP");
  std::size_t start = c.offset_of(c.pos());
  std::vector<std::string> parts = parse_dotted(c, "a target name", "DROP TRANSFORM");
  if (parts.size() > 2) {
    c.fail_at(start,
              "too many name parts (" + std::to_string(parts.size()) + ") after DROP TRANSFORM",
              "; expected [schema.]target (a single field cannot be dropped this way)");
  }
  c.expect_end("the DROP TRANSFORM target");
  DropTransformStmt stmt;
  stmt.target =
      parts.size() == 1 ? QualifiedName{std::nullopt, parts[0]} : QualifiedName{parts[0], parts[1]};
  return stmt;
}

AlterClause parse_alter_clause(Cursor& c, Range item, const std::string& after) {
  const auto& tokens = c.tokens();
  AlterClause clause;
  c.seek(item.first);
  if (item.first == item.second) c.fail_expected("ADD, DROP or ALTER", after);
  clause.position = static_cast<int>(c.offset_of(item.first));
  if (c.accept_word("add")) {
    if (c.pos() == item.second) c.fail_expected("an expression (expr AS name)", "ADD");
    Field field = parse_field(c, {c.pos(), item.second});
    clause.kind = AlterClause::Kind::add;
    clause.name = field.name;
    clause.expr = std::move(field.expr);
  } else if (c.accept_word("drop")) {
    clause.kind = AlterClause::Kind::drop;
    clause.name = c.expect_name("a field name", "DROP");
  } else if (c.accept_word("alter")) {
    clause.kind = AlterClause::Kind::alter;
    clause.name = c.expect_name("a field name", "ALTER");
    c.expect_word("as", "ALTER " + clause.name);
    if (c.pos() >= item.second) c.fail_expected("an expression", "AS");
    clause.expr = expression_in(c, {c.pos(), item.second});
    c.seek(item.second);
  } else {
    c.fail_expected("ADD, DROP or ALTER", after);
  }
  if (c.pos() < item.second) {
    c.fail_at(tokens[c.pos()].begin, "unexpected " + describe(c.peek()),
              " after field name \"" + clause.name + "\"; expected \",\" or the end");
  }
  return clause;
}

// ALTER TRANSFORM [schema.]target clause, ... (1-1 targets; checked later).
AlterTransformStmt parse_alter(Cursor& c) {
  c.expect_word("transform", "ALTER");
  AlterTransformStmt stmt;
  stmt.text = std::string(c.text());
  stmt.target = parse_table_name(c, "a target name", "ALTER TRANSFORM");
  if (c.done()) c.fail_expected("ADD, DROP or ALTER", "the ALTER TRANSFORM target");
  std::string after = "the ALTER TRANSFORM target";
  for (Range item : split_commas(c.tokens(), {c.pos(), c.tokens().size()})) {
    stmt.clauses.push_back(parse_alter_clause(c, item, after));
    after = "\",\"";
  }
  c.seek(c.tokens().size());
  return stmt;
}

Statement dispatch(Cursor& c) {
  if (c.done()) {
    throw Error(ErrorCode::parse,
                "empty statement; expected one of " + std::string(kStatementForms));
  }
  if (c.accept_word("transform")) return parse_transform(c);
  if (c.accept_word("pause")) return parse_address<PauseStmt>(c, "PAUSE");
  if (c.accept_word("resume")) return parse_address<ResumeStmt>(c, "RESUME");
  if (c.accept_word("drop")) return parse_drop(c);
  if (c.accept_word("alter")) return parse_alter(c);
  if (c.accept_word("relationship")) return parse_relationship(c);
  throw Error(ErrorCode::parse, "unknown statement " + describe(c.peek()) + " at " +
                                    c.where(c.offset_of(0)) + "; expected one of " +
                                    std::string(kStatementForms));
}

// One statement per call: a single trailing ";" is tolerated, any other
// top-level ";" means a second statement was smuggled in.
std::vector<Token> statement_tokens(std::string_view text) {
  std::vector<Token> tokens = tokenize(text);
  if (!tokens.empty() && is_punct(tokens.back(), ";")) tokens.pop_back();
  for (const Token& token : tokens) {
    if (is_punct(token, ";")) {
      throw Error(ErrorCode::parse, "unexpected \";\" at " + line_col(text, token.begin) +
                                        ": one statement per call (split a file with "
                                        "split_statements)");
    }
  }
  return tokens;
}

}  // namespace

Statement parse_statement(const std::string& text) {
  Cursor cursor(text, statement_tokens(text));
  check_brackets(cursor);
  return dispatch(cursor);
}

std::vector<std::string> split_statements(const std::string& text) {
  std::vector<Token> tokens = tokenize(text);
  std::vector<std::string> statements;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= tokens.size(); ++i) {
    bool boundary = i == tokens.size() || (depth == 0 && is_punct(tokens[i], ";"));
    if (i < tokens.size()) depth = std::max(0, depth + depth_change(tokens[i]));
    if (!boundary) continue;
    if (i > start) {
      std::size_t begin = tokens[start].begin;
      statements.emplace_back(text.substr(begin, tokens[i - 1].end - begin));
    }
    start = i + 1;
  }
  return statements;
}

}  // namespace trellis::lang
