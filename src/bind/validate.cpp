// Define-time validation; see validate.hpp. Everything the statement names
// is read first, in one place (load_names): the catalog rows of the target
// and the source, and one description of each table from the system
// catalogs. The checks then run over what was read, in memory, in a fixed
// order (the order of their messages); only typing goes back to
// PostgreSQL, through one probe per expression (bind/typing).
#include "bind/validate.hpp"

#include <fmt/format.h>

#include <cctype>
#include <set>

#include "base/sql_text.hpp"
#include "bind/refusal.hpp"
#include "bind/table_description.hpp"
#include "bind/typing.hpp"
#include "lang/tokens.hpp"
#include "trellis/error.hpp"

namespace trellis::bind {

using catalog::Column;
using catalog::TransformDef;
using lang::Expr;
using lang::TransformStmt;

namespace {

constexpr size_t kMaxTargetName = 55;  // leaves room for "__ledger" within 63 bytes

const std::set<std::string> kKeyTypes = {
    "int2",      "int4",        "int8", "numeric", "text",  "varchar", "bpchar", "uuid", "date",
    "timestamp", "timestamptz", "time", "bool",    "bytea", "oid",     "name",   "char", "_text"};

std::string qualified_text(const std::string& schema, const std::string& name) {
  return schema + "." + name;
}

std::string column_list(const TableDescription& t) {
  std::string out;
  for (const auto& c : t.columns) out += (out.empty() ? "" : ", ") + c.column.name;
  return out;
}

// What define reads about the names a statement uses, loaded before any
// check runs. A re-validation (`resuming`) reads neither the target (it is
// the transform's own) nor the upstream.
struct Names {
  std::string source_schema;
  std::optional<catalog::TransformDef> target_transform;  // a transform of the target's name
  std::optional<TableDescription> target;                 // a relation of the target's name
  std::optional<TableDescription> source;
  std::optional<catalog::TransformDef> upstream;   // the transform whose target is the source
  std::optional<catalog::CapturedTable> captured;  // the source, as capture registered it
};

Names load_names(pg::Connection& conn, catalog::Store& store, const TransformStmt& stmt,
                 const std::string& target_schema, const ValidateContext& ctx) {
  Names names;
  names.source_schema = stmt.source.schema.value_or(ctx.target_schema);
  const std::string& source = stmt.source.name;
  if (ctx.resuming) {
    names.source = describe_table(conn, names.source_schema, source);
  } else {
    names.target_transform = store.transform(conn, target_schema, stmt.target.name);
    auto tables =
        describe_tables(conn, {{target_schema, stmt.target.name}, {names.source_schema, source}});
    names.target = std::move(tables[0]);
    names.source = std::move(tables[1]);
    names.upstream = store.transform(conn, names.source_schema, source);
  }
  names.captured = store.captured_table(conn, names.source_schema, source);
  return names;
}

const TableDescription& resolve_source(const TransformStmt& stmt, const Names& names) {
  const std::string& schema = names.source_schema;
  const auto& info = names.source;
  if (!info)
    refuse(ErrorCode::not_found,
           fmt::format("source table {} does not exist; create it first or qualify the name as "
                       "schema.table",
                       qualified_text(schema, stmt.source.name)));
  std::string name = qualified_text(schema, stmt.source.name);
  if (info->relkind != 'r')
    refuse(ErrorCode::validation,
           fmt::format("source {} is not a plain table (relkind '{}'); transforms read ordinary "
                       "tables only",
                       name, info->relkind));
  if (info->in_hierarchy)
    refuse(ErrorCode::validation,
           fmt::format("source table {} is part of an inheritance or partition hierarchy, which "
                       "Trellis cannot capture; use a plain table",
                       name));
  if (info->rls_applies)
    refuse(ErrorCode::validation,
           fmt::format("row-level security on source table {} applies to Trellis's role; disable "
                       "it, or run Trellis as the table owner or a BYPASSRLS role",
                       name));
  if (info->subscribed)
    refuse(ErrorCode::validation,
           fmt::format("source table {} is written by a logical-replication subscription; "
                       "Trellis cannot capture it",
                       name));
  return *info;
}

std::vector<std::string> key_names(const TransformStmt& stmt, const TableDescription& src) {
  std::string name = qualified_text(src.schema, src.name);
  if (stmt.key_columns.empty()) {
    if (src.primary_key.empty())
      refuse(ErrorCode::validation,
             fmt::format("source table {} has no primary key; add one, or name its row identity "
                         "with KEY (column, ...) over a unique index",
                         name));
    return src.primary_key;
  }
  std::set<std::string> wanted(stmt.key_columns.begin(), stmt.key_columns.end());
  if (wanted.size() != stmt.key_columns.size())
    refuse(ErrorCode::validation, fmt::format("KEY of {} names a column twice", name));
  for (const auto& k : stmt.key_columns) {
    const auto* col = src.find(k);
    if (!col)
      refuse(ErrorCode::validation,
             fmt::format("KEY column \"{}\" does not exist in {} (columns: {})", k, name,
                         column_list(src)));
    if (!col->not_null)
      refuse(ErrorCode::validation,
             fmt::format("KEY column \"{}\" of {} is nullable; make it NOT NULL", k, name));
  }
  for (const auto& u : src.unique_keys)
    if (std::set<std::string>(u.begin(), u.end()) == wanted) return stmt.key_columns;
  refuse(ErrorCode::validation,
         fmt::format("KEY ({}) of {} is not backed by a unique index; create a unique index on "
                     "exactly those columns",
                     fmt::join(stmt.key_columns, ", "), name));
}

std::vector<Column> key_columns(const TransformStmt& stmt, const TableDescription& src) {
  std::vector<Column> key;
  std::string name = qualified_text(src.schema, src.name);
  for (const auto& k : key_names(stmt, src)) {
    const auto* col = src.find(k);
    if (!col->is_enum && !kKeyTypes.count(col->base_type))
      refuse(ErrorCode::validation,
             fmt::format("key column \"{}\" of {} has type {}, whose equality is not "
                         "deterministic enough to identify rows; key the transform on other "
                         "columns with KEY (...)",
                         k, name, col->column.type));
    if (!col->deterministic)
      refuse(ErrorCode::validation,
             fmt::format("key column \"{}\" of {} uses a nondeterministic collation; use a "
                         "deterministic collation for key columns",
                         k, name));
    key.push_back(col->column);
  }
  return key;
}

// `taken`: the columns the target carries besides the fields (1-1: the key;
// aggregates: the group columns).
void check_field_names(const TransformStmt& stmt, const std::vector<Column>& taken) {
  std::set<std::string> seen;
  for (const auto& f : stmt.fields) {
    std::string at = where_at(stmt, f.name_position);
    if (f.name.rfind("__", 0) == 0)
      refuse(ErrorCode::validation,
             fmt::format("field name \"{}\" at {} starts with \"__\", which Trellis reserves; "
                         "rename the field",
                         f.name, at));
    for (const auto& k : taken)
      if (k.name == f.name)
        refuse(ErrorCode::validation,
               fmt::format("field \"{}\" at {} has the name of {} column \"{}\", which the "
                           "target already carries; rename the field",
                           f.name, at, stmt.group_by.empty() ? "key" : "GROUP BY", k.name));
    if (!seen.insert(f.name).second)
      refuse(ErrorCode::validation,
             fmt::format("field name \"{}\" at {} is used twice; give each field its own name",
                         f.name, at));
    if (f.expr.has_aggregate_call && stmt.group_by.empty())
      refuse(ErrorCode::validation,
             fmt::format("field \"{}\" at {} calls an aggregate function; a transform without "
                         "GROUP BY has one row per source row, so aggregates are not allowed",
                         f.name, at));
  }
}

void check_columns(const TransformStmt& stmt, const Expr& expr, const TableDescription& src,
                   const std::string& alias, const std::string& what) {
  for (const auto& ref : expr.columns) {
    std::string at = where_at(stmt, ref.position);
    if (ref.qualifier && *ref.qualifier != alias)
      refuse(
          ErrorCode::validation,
          fmt::format("{} at {} refers to \"{}.{}\", but the only table in scope is \"{}\"; "
                      "write {}.{} or just {}",
                      what, at, *ref.qualifier, ref.column, alias, alias, ref.column, ref.column));
    if (!src.find(ref.column))
      refuse(ErrorCode::validation,
             fmt::format("{} at {} refers to column \"{}\", which does not exist in {}.{} "
                         "(columns: {})",
                         what, at, ref.column, src.schema, src.name, column_list(src)));
  }
}

// The target's name itself, and for a new definition, the ADOPT clause.
void check_target_name(const TransformStmt& stmt, const std::string& schema,
                       const ValidateContext& ctx) {
  std::string name = qualified_text(schema, stmt.target.name);
  if (stmt.target.name.size() > kMaxTargetName)
    refuse(ErrorCode::validation,
           fmt::format("target name \"{}\" is {} bytes; Trellis allows at most {} so its side "
                       "tables' names fit PostgreSQL's 63-byte limit",
                       stmt.target.name, stmt.target.name.size(), kMaxTargetName));
  if (stmt.target.name.rfind("__", 0) == 0)
    refuse(ErrorCode::validation,
           fmt::format("target name \"{}\" starts with \"__\", which Trellis reserves", name));
  if (ctx.resuming) return;
  if (stmt.adopt_existing)
    refuse(ErrorCode::validation,
           fmt::format("ADOPT EXISTING TABLE is not supported yet; drop or rename {} and define "
                       "the transform without it",
                       name));
}

// A new definition's target name must be free (neither is read when resuming).
void check_target_free(const TransformStmt& stmt, const std::string& schema, const Names& names) {
  std::string name = qualified_text(schema, stmt.target.name);
  if (names.target_transform)
    refuse(ErrorCode::conflict,
           fmt::format("transform {} already exists; DROP TRANSFORM it first or pick another "
                       "target name",
                       name));
  if (names.target)
    refuse(ErrorCode::conflict,
           fmt::format("relation {} already exists; pick another target name", name));
}

// A new definition over another transform's target needs that transform
// live. Re-validating an existing transform (RESUME, ALTER, a widening) does
// not: a resumed transform waits at waiting_to_backfill until every upstream
// it reads is live (the reconciler starts its build only then), so an
// upstream and its readers can be resumed together.
void check_upstream(const Names& names, const TableDescription& src,
                    const std::vector<Column>& key) {
  if (const auto& upstream = names.upstream; upstream && upstream->status != catalog::Status::live)
    refuse(ErrorCode::validation,
           fmt::format("source {} is the target of transform {}, which is {} and not live; "
                       "wait until it is live (trellis await) and define this again",
                       upstream->target_name(), upstream->target_name(),
                       catalog::name(upstream->status)));
  if (const auto& captured = names.captured) {
    bool same = captured->key.size() == key.size();
    for (size_t i = 0; same && i < key.size(); ++i) same = captured->key[i].name == key[i].name;
    if (!same)
      refuse(ErrorCode::validation,
             fmt::format("source {}.{} is already captured keyed by another KEY; every "
                         "transform over one table must use the same key",
                         src.schema, src.name));
  }
}

std::vector<Column> read_columns(const TransformStmt& stmt, const TableDescription& src,
                                 const std::vector<Column>& key, const std::vector<Column>& group) {
  std::set<std::string> names;
  for (const auto& k : key) names.insert(k.name);
  for (const auto& g : group) names.insert(g.name);
  for (const auto& f : stmt.fields)
    for (const auto& c : f.expr.columns) names.insert(c.column);
  if (stmt.where)
    for (const auto& c : stmt.where->columns) names.insert(c.column);
  std::vector<Column> out;
  for (const auto& n : names) out.push_back(src.find(n)->column);
  return out;
}

bool is_plain_column(const Expr& e) {
  if (e.columns.size() != 1 || !e.function_names.empty()) return false;
  for (char c : e.text)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '"' || c == '.' ||
          c == '$' || std::isspace(static_cast<unsigned char>(c)) ||
          static_cast<unsigned char>(c) >= 0x80))
      return false;
  return true;
}

std::vector<Column> group_columns(const TransformStmt& stmt, const TableDescription& src) {
  std::vector<Column> group;
  std::set<std::string> seen;
  for (const auto& g : stmt.group_by) {
    std::string at = where_at(stmt, g.position);
    if (!is_plain_column(g))
      refuse(ErrorCode::validation,
             fmt::format("GROUP BY item at {} ({}) is an expression; group by source columns "
                         "(each becomes a target column of the same name), or compute the "
                         "expression in an upstream 1-1 transform and group by its field",
                         at, g.text));
    const std::string& name = g.columns.front().column;
    if (name.rfind("__", 0) == 0)
      refuse(ErrorCode::validation,
             fmt::format("GROUP BY column \"{}\" at {} starts with \"__\", which Trellis "
                         "reserves",
                         name, at));
    if (!seen.insert(name).second)
      refuse(ErrorCode::validation,
             fmt::format("GROUP BY names column \"{}\" twice (at {}); two keys cannot share one "
                         "target column",
                         name, at));
    const auto* col = src.find(name);
    if (col->base_type == "interval")
      refuse(ErrorCode::validation,
             fmt::format("GROUP BY column \"{}\" at {} has type interval, whose equal values "
                         "differ ('1 day' and '24 hours' are one group), so the group's value is "
                         "not well defined; group by a normalized value computed in an upstream "
                         "1-1 transform, such as extract(epoch from {})",
                         name, at, name));
    if (!col->deterministic)
      refuse(ErrorCode::validation,
             fmt::format("GROUP BY column \"{}\" at {} uses a nondeterministic collation, under "
                         "which different values share a group; group by a column with a "
                         "deterministic collation",
                         name, at));
    group.push_back(col->column);
  }
  return group;
}

// Columns the fields read that are neither key nor group: the ledger's copies.
std::vector<Column> ledger_columns(const TransformStmt& stmt, const TableDescription& src,
                                   const std::vector<Column>& key,
                                   const std::vector<Column>& group) {
  std::set<std::string> skip;
  for (const auto& c : key) skip.insert(c.name);
  for (const auto& c : group) skip.insert(c.name);
  std::set<std::string> names;
  for (const auto& f : stmt.fields)
    for (const auto& c : f.expr.columns)
      if (!skip.count(c.column)) names.insert(c.column);
  std::vector<Column> out;
  for (const auto& n : names) out.push_back(src.find(n)->column);
  return out;
}

void check_source_index(const TableDescription& src, const std::vector<Column>& group) {
  std::vector<std::string> names;
  for (const auto& g : group) names.push_back(g.name);
  if (src.has_index_leading_with(names)) return;
  std::string cols = fmt::format("{}", fmt::join(names, ", "));
  refuse(ErrorCode::validation,
         fmt::format("source table {}.{} has no index leading with the GROUP BY columns ({}); "
                     "create one with CREATE INDEX ON {} ({}), or add WITHOUT SOURCE INDEX "
                     "after GROUP BY to go without",
                     src.schema, src.name, cols, base::qualified(src.schema, src.name),
                     base::join<std::string>(names, ", ",
                                             [](const std::string& n) { return base::ident(n); })));
}

}  // namespace

TransformDef validate_transform(pg::Connection& conn, catalog::Store& store,
                                const TransformStmt& stmt, const ValidateContext& ctx) {
  TransformDef def;
  def.target_schema = stmt.target.schema.value_or(ctx.target_schema);
  def.target_table = stmt.target.name;
  check_target_name(stmt, def.target_schema, ctx);
  Names names = load_names(conn, store, stmt, def.target_schema, ctx);
  check_target_free(stmt, def.target_schema, names);
  const TableDescription& src = resolve_source(stmt, names);
  def.source_schema = src.schema;
  def.source_table = src.name;
  def.alias = stmt.alias.value_or(src.name);
  def.key = key_columns(stmt, src);
  for (const auto& g : stmt.group_by) check_columns(stmt, g, src, def.alias, "GROUP BY item");
  for (const auto& f : stmt.fields)
    check_columns(stmt, f.expr, src, def.alias, fmt::format("field \"{}\"", f.name));
  if (stmt.where) check_columns(stmt, *stmt.where, src, def.alias, "WHERE predicate");
  if (!stmt.group_by.empty()) {
    def.shape = catalog::Shape::aggregate;
    def.compare_group_text = true;
    def.group = group_columns(stmt, src);
    def.ledger = ledger_columns(stmt, src, def.key, def.group);
    def.without_source_index = stmt.without_source_index;
    if (!stmt.without_source_index) check_source_index(src, def.group);
  }
  check_field_names(stmt, def.shape == catalog::Shape::aggregate ? def.group : def.key);
  check_upstream(names, src, def.key);
  def.reads = read_columns(stmt, src, def.key, def.group);
  type_expressions(conn, stmt, def);
  def.statement = normalized_statement(def);
  return def;
}

std::string normalized_statement(const TransformDef& def) {
  using base::ident;
  std::string out = fmt::format(
      "TRANSFORM {} FROM {} AS {} KEY ({}) SELECT ",
      base::qualified(def.target_schema, def.target_table),
      base::qualified(def.source_schema, def.source_table), ident(def.alias),
      base::join<Column>(def.key, ", ", [](const Column& c) { return base::ident(c.name); }));
  if (def.shape == catalog::Shape::aggregate) {
    out.resize(out.size() - std::string(" SELECT ").size());
    out += " GROUP BY " +
           base::join<Column>(def.group, ", ", [](const Column& c) { return base::ident(c.name); });
    if (def.without_source_index) out += " WITHOUT SOURCE INDEX";
    out += " SELECT ";
  }
  for (size_t i = 0; i < def.fields.size(); ++i)
    out += (i ? ", " : "") + def.fields[i].sql + " AS " + ident(def.fields[i].name);
  if (def.where_sql) out += " WHERE " + *def.where_sql;
  return out;
}

}  // namespace trellis::bind
