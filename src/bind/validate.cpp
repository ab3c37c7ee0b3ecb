// Define-time validation; see validate.hpp. Everything the statement names
// is read first, in one place (load_names): the catalog rows of the target
// and the source, and one description of each table from the system
// catalogs. The checks then run over what was read, in memory, in a fixed
// order (the order of their messages); only typing goes back to
// PostgreSQL, through one probe per expression (bind/typing).
#include "bind/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "base/sql_text.hpp"
#include "bind/joins.hpp"
#include "bind/privileges.hpp"
#include "bind/refusal.hpp"
#include "bind/relationships.hpp"
#include "bind/table_description.hpp"
#include "bind/typing.hpp"
#include "lang/expression.hpp"
#include "lang/tokens.hpp"
#include "trellis/error.hpp"

namespace trellis::bind {

using catalog::Column;
using catalog::TransformDef;
using lang::Expr;
using lang::TransformStmt;

namespace {

constexpr size_t kMaxTargetName = 55;  // leaves room for "__ledger", "__reject" within 63 bytes

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
  // ADOPT EXISTING TABLE: a transform that reads the target table.
  std::optional<catalog::TransformDef> target_reader;
};

// A transform reading table schema.name (as its source or a joined table).
std::optional<catalog::TransformDef> reader_of(pg::Connection& conn, catalog::Store& store,
                                               const std::string& schema, const std::string& name) {
  auto captured = store.captured_table(conn, schema, name);
  if (!captured) return std::nullopt;
  for (auto& t : store.transforms(conn))
    if (t.reads_table(captured->id)) return std::move(t);
  return std::nullopt;
}

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
    if (stmt.adopt_existing)
      names.target_reader = reader_of(conn, store, target_schema, stmt.target.name);
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
  check_capturable(*info, "source");
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
void check_field_names(const TransformStmt& stmt, const std::vector<Column>& taken,
                       bool aggregate) {
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
                           f.name, at, aggregate ? "GROUP BY" : "key", k.name));
    if (!seen.insert(f.name).second)
      refuse(ErrorCode::validation,
             fmt::format("field name \"{}\" at {} is used twice; give each field its own name",
                         f.name, at));
  }
}

// The key columns a join that fans out adds: to a 1-1 target (catalog
// fan_column_name), unique and short enough; to an aggregate's ledger
// (catalog ledger_fan_column_name), short enough.
// A join whose ON covers a unique key other than the primary key is
// to-one for a 1-1 transform (JoinDef::held); an aggregate's ledger keeps
// each match as a join that fans out does (its shape is the user's
// concern nowhere). A re-validation keeps what the target was built as: a
// target holding the join's key as a key column (`<alias>_<column>`) stays
// fanned out; one holding it as the hidden held column needs the unique
// key still there.
void settle_held_joins(pg::Connection& conn, const TransformStmt& stmt, TransformDef& def,
                       bool aggregate, const ValidateContext& ctx) {
  std::optional<TableDescription> target;
  if (ctx.resuming && !aggregate && !def.joins.empty())
    target = describe_table(conn, def.target_schema, def.target_table);
  for (size_t i = 0; i < def.joins.size(); ++i) {
    auto& j = def.joins[i];
    if (!j.fans) continue;
    const std::string& k = j.key.front().name;
    bool built_fanned = target && target->find(catalog::fan_column_name(j, j.key.front()));
    bool built_held = target && target->find(catalog::ledger_fan_column_name(j, j.key.front()));
    if (built_held && !j.held)
      refuse(ErrorCode::validation,
             fmt::format("JOIN {} AS {} at {} was to-one through a unique key of {} that is gone "
                         "(its ON no longer covers the primary key, {}, or a unique key); create "
                         "the unique index again, or drop the transform and define it again",
                         j.name(), j.alias, where_at(stmt, stmt.joins[i].position), j.name(), k));
    if (aggregate || built_fanned) j.held = false;
    if (j.held) j.fans = false;
  }
}

void check_fan_key(const TransformStmt& stmt, const TransformDef& def, bool aggregate) {
  std::set<std::string> seen;
  for (const auto& k : def.key) seen.insert(k.name);
  for (size_t i = 0; i < def.joins.size(); ++i) {
    const auto& j = def.joins[i];
    if (!j.fans && !j.held) continue;
    std::string at = where_at(stmt, stmt.joins[i].position);
    std::string join = fmt::format("JOIN {} AS {} at {} {}", j.name(), j.alias, at,
                                   j.held ? "is to-one through a unique key" : "fans out");
    for (const auto& k : j.key) {
      std::string name = aggregate || j.held ? catalog::ledger_fan_column_name(j, k)
                                             : catalog::fan_column_name(j, k);
      if (name.size() > 63)
        refuse(ErrorCode::validation,
               fmt::format("{}, so the {} holds its key column {} as \"{}\", "
                           "which is longer than 63 bytes; give the join a shorter alias",
                           join, aggregate ? "ledger" : "target", k.name, name));
      if (!aggregate && !seen.insert(name).second)
        refuse(ErrorCode::validation,
               fmt::format("{}, so the target holds its key column {} as \"{}\", "
                           "which another key column of the target already is; give the join "
                           "another alias",
                           join, k.name, name));
      // An aggregate whose WHERE reads under a LEFT JOIN that fans out
      // keeps the matches it rejects keyed as a 1-1 target would be.
      if (aggregate && !def.rejecting_joins.empty() && j.fans &&
          !seen.insert(catalog::fan_column_name(j, k)).second)
        refuse(ErrorCode::validation,
               fmt::format("{}, so the table of the matches its WHERE rejects holds its key "
                           "column {} as \"{}\", which another of its key columns already is; "
                           "give the join another alias",
                           join, k.name, catalog::fan_column_name(j, k)));
    }
  }
}

// The target's name itself.
void check_target_name(const TransformStmt& stmt, const std::string& schema) {
  std::string name = qualified_text(schema, stmt.target.name);
  if (stmt.target.name.size() > kMaxTargetName)
    refuse(ErrorCode::validation,
           fmt::format("target name \"{}\" is {} bytes; Trellis allows at most {} so its side "
                       "tables' names fit PostgreSQL's 63-byte limit",
                       stmt.target.name, stmt.target.name.size(), kMaxTargetName));
  if (stmt.target.name.rfind("__", 0) == 0)
    refuse(ErrorCode::validation,
           fmt::format("target name \"{}\" starts with \"__\", which Trellis reserves", name));
}

// ADOPT EXISTING TABLE needs a plain table of the target's name that no
// transform reads (adopting one would make a transform read its own target,
// or a target of another; the rest of the comparison runs at registration,
// bind/adoption).
void check_adopted_table(const std::string& name, const Names& names) {
  if (!names.target)
    refuse(ErrorCode::not_found,
           fmt::format("table {} does not exist; create it first, or drop ADOPT EXISTING TABLE to "
                       "let Trellis create it",
                       name));
  if (names.target->relkind != 'r')
    refuse(ErrorCode::validation,
           fmt::format("{} is {}; ADOPT EXISTING TABLE adopts a plain table", name,
                       names.target->relkind == 'p' ? "a partitioned table" : "not a table"));
  if (const auto& reader = names.target_reader)
    refuse(ErrorCode::validation,
           fmt::format("table {} is read by transform {}; a table a transform reads cannot be "
                       "adopted as a target",
                       name, reader->target_name()));
}

// A new definition's target name must be free (neither is read when
// resuming), or, with ADOPT EXISTING TABLE, name a table to adopt.
void check_target_free(const TransformStmt& stmt, const std::string& schema, const Names& names) {
  std::string name = qualified_text(schema, stmt.target.name);
  if (names.target_transform)
    refuse(ErrorCode::conflict,
           fmt::format("transform {} already exists; DROP TRANSFORM it first or pick another "
                       "target name",
                       name));
  if (stmt.adopt_existing) return check_adopted_table(name, names);
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

// An adopted target is none of the tables its transform reads.
void check_reads_other_tables(const Scope& scope, const TransformDef& def) {
  for (const auto& e : scope.tables)
    if (e.table.schema == def.target_schema && e.table.name == def.target_table)
      refuse(ErrorCode::validation,
             fmt::format("transform {} reads table {} itself; a transform cannot adopt a table "
                         "it reads as its target",
                         def.target_name(), def.target_name()));
}

std::vector<Column> read_columns(const Scope& scope, const TableDescription& src,
                                 const std::vector<Column>& key) {
  std::set<std::string> names;
  for (const auto& k : key) names.insert(k.name);
  auto it = scope.read.find(scope.tables.front().alias);
  if (it != scope.read.end()) names.insert(it->second.begin(), it->second.end());
  std::vector<Column> out;
  for (const auto& n : names) out.push_back(src.find(n)->column);
  return out;
}

// One column reference and nothing else, by the parse tree (`CASE WHEN g
// THEN 1 ELSE 0 END` reads one column too, and is no column).
bool is_plain_column(const Expr& e) {
  return e.is_column && e.columns.size() == 1;
}

// A GROUP BY item that is a source column under its own name (`grp`,
// `s.grp`, `grp AS grp`); anything else is an expression item.
bool is_plain_group(const lang::GroupItem& g) {
  return is_plain_column(g.expr) && (!g.name || *g.name == g.expr.columns.front().column);
}

// The group columns: a plain item is the source column (name, type); an
// expression item is named by its AS and typed later by its probe
// (type_expressions), with its SQL in def.group_exprs.
void resolve_group(const TransformStmt& stmt, const TableDescription& src, const Scope& scope,
                   TransformDef& def) {
  std::set<std::string> seen;
  bool any_expression = false;
  for (const auto& g : stmt.group_by) {
    std::string at = where_at(stmt, g.expr.position);
    std::string joined;  // the joined table's alias the item reads
    for (const auto& ref : g.expr.columns)
      if (scope.alias_of(ref) != def.alias) joined = scope.alias_of(ref);
    bool plain = joined.empty() && is_plain_group(g);
    bool joined_column = !joined.empty() && is_plain_column(g.expr);
    if (!plain && !joined_column && !g.name)
      refuse(ErrorCode::validation,
             fmt::format("GROUP BY item at {} ({}) is an expression; name it with AS (GROUP BY "
                         "{} AS name), and it becomes the target column of that name",
                         at, g.expr.text, g.expr.text));
    if (!plain && g.expr.has_aggregate_call)
      refuse(ErrorCode::validation,
             fmt::format("GROUP BY item at {} ({}) calls an aggregate function; group by values "
                         "of the source row",
                         at, g.expr.text));
    const std::string name = g.name ? *g.name : g.expr.columns.front().column;
    std::string name_at = g.name ? where_at(stmt, g.name_position) : at;
    if (name.rfind("__", 0) == 0)
      refuse(ErrorCode::validation,
             fmt::format("GROUP BY column \"{}\" at {} starts with \"__\", which Trellis "
                         "reserves",
                         name, name_at));
    if (!seen.insert(name).second)
      refuse(ErrorCode::validation,
             fmt::format("GROUP BY names column \"{}\" twice (at {}); two keys cannot share one "
                         "target column",
                         name, name_at));
    if (!plain && src.find(name))
      refuse(ErrorCode::validation,
             fmt::format("GROUP BY name \"{}\" at {} is also a column of source {}.{}; name "
                         "the item {} differently (GROUP BY {} AS other_name), since fields read "
                         "the source's own \"{}\"",
                         name, name_at, src.schema, src.name, g.expr.text, g.expr.text, name));
    if (!plain && !joined_column) {
      def.group.push_back({name, "", "", true});  // typed by its probe
      def.group_exprs.push_back({g.expr.sql, "", joined});
      any_expression = true;
      continue;
    }
    const auto& ref = g.expr.columns.front();
    const auto* col = (joined.empty() ? src : scope.find(joined)->table).find(ref.column);
    if (col->base_type == "interval")
      refuse(ErrorCode::validation,
             fmt::format("GROUP BY column \"{}\" at {} has type interval, whose equal values "
                         "differ ('1 day' and '24 hours' are one group), so the group's value is "
                         "not well defined; group by a normalized value instead, such as "
                         "GROUP BY extract(epoch from {}) AS {}_seconds",
                         name, at, name, name));
    if (!col->deterministic)
      refuse(ErrorCode::validation,
             fmt::format("GROUP BY column \"{}\" at {} uses a nondeterministic collation, under "
                         "which different values share a group; group by a column with a "
                         "deterministic collation",
                         name, at));
    Column column = col->column;
    column.name = name;
    def.group.push_back(column);
    if (joined.empty()) {
      def.group_exprs.push_back({});
      continue;
    }
    def.group_exprs.push_back({base::ident(joined) + "." + base::ident(ref.column), "", joined});
    any_expression = true;
  }
  if (!any_expression) def.group_exprs.clear();
}

// Columns the fields read that are neither key nor group: the ledger's copies.
// (A joined table's columns are the ledger's too, compile/ names them; see
// JoinDef::reads.)
std::vector<Column> ledger_columns(const TransformStmt& stmt, const TableDescription& src,
                                   const Scope& scope, const TransformDef& def) {
  std::set<std::string> skip;
  for (const auto& c : def.key) skip.insert(c.name);
  for (const auto& c : def.group) skip.insert(c.name);
  std::set<std::string> names;
  for (const auto& f : stmt.fields)
    for (const auto& c : f.expr.columns)
      if (!skip.count(c.column) && scope.alias_of(c) == def.alias) names.insert(c.column);
  std::vector<Column> out;
  for (const auto& n : names) out.push_back(src.find(n)->column);
  return out;
}

}  // namespace

std::vector<std::string> group_index_keys(const TransformDef& def) {
  std::vector<std::string> keys;
  for (size_t i = 0; i < def.group.size(); ++i)
    keys.push_back(def.group_is_expression(i) ? def.group_exprs[i].index_key : def.group[i].name);
  return keys;
}

std::string group_index_suggestion(const TransformDef& def) {
  std::string keys;
  for (size_t i = 0; i < def.group.size(); ++i)
    // pg_get_indexdef writes an expression key as CREATE INDEX takes it
    // (a function call bare, anything else in parentheses).
    keys += (i ? ", " : "") + (def.group_is_expression(i) ? def.group_exprs[i].index_key
                                                          : base::ident(def.group[i].name));
  return fmt::format("CREATE INDEX ON {} ({})",
                     base::qualified(def.source_schema, def.source_table), keys);
}

bool has_group_index(const TableDescription& src, const TransformDef& def) {
  // Grouped by the whole source key (with or without more items), each
  // group is one source row, found through the key's own index.
  bool by_key = std::all_of(def.key.begin(), def.key.end(), [&](const Column& k) {
    for (size_t i = 0; i < def.group.size(); ++i)
      if (!def.group_is_expression(i) && def.group[i].name == k.name) return true;
    return false;
  });
  if (by_key && !def.key.empty()) return true;
  // A joined table's column is no column of the source: no index on the
  // source can lead with it (the joins' own indexes are checked apart).
  return def.group.empty() || def.group_reads_join() ||
         src.has_index_leading_with(group_index_keys(def));
}

namespace {

// An expression's index key is read only here (describe_index_keys locks
// the source's indexes).
void check_source_index(pg::Connection& conn, const TableDescription& src,
                        const TransformDef& def) {
  TableDescription described = src;
  if (!def.group_exprs.empty()) describe_index_keys(conn, described);
  if (has_group_index(described, def)) return;
  std::string items = fmt::format("{}", fmt::join(group_index_keys(def), ", "));
  refuse(ErrorCode::validation,
         fmt::format("source table {}.{} has no index leading with the GROUP BY items ({}); "
                     "create one with {}, or add WITHOUT SOURCE INDEX after GROUP BY to go "
                     "without",
                     src.schema, src.name, items, group_index_suggestion(def)));
}

bool any_aggregate_field(const TransformStmt& stmt) {
  return std::any_of(stmt.fields.begin(), stmt.fields.end(),
                     [](const lang::Field& f) { return f.expr.has_aggregate_call; });
}

// The columns that identify the rows of `upstream`'s target to its
// readers: an aggregate's group columns, or what a 1-1 over one carries.
std::vector<std::string> identity_of(const catalog::TransformDef& upstream) {
  if (upstream.shape != catalog::Shape::aggregate) return upstream.identity;
  std::vector<std::string> out;
  for (const auto& g : upstream.group) out.push_back(g.name);
  return out;
}

// A 1-1 transform over an aggregate target is keyed by that target's
// group columns (docs/architecture.md, "Keys of derived sources"): its
// target carries them, as leading fields `alias.col AS col`, under UNIQUE
// NULLS NOT DISTINCT, and addresses its rows by the upstream's hidden
// "__group" (group values may be NULL, which a primary key cannot be),
// which determines them. The same holds over a 1-1 that carries them. A
// field the statement names like one of them must be that column. A new
// definition gets them written into its stored statement, so a
// re-validation (RESUME, ALTER; `names.upstream` is not read then) finds
// them as the ordinary fields they are and keeps the identity it was
// built with.
std::vector<std::string> carried_identity(const TransformStmt& stmt, const Names& names) {
  const auto& upstream = names.upstream;
  if (!upstream || !stmt.key_columns.empty() || !stmt.group_by.empty() || any_aggregate_field(stmt))
    return {};
  return identity_of(*upstream);
}

TransformStmt with_upstream_group(const TransformStmt& stmt, const Names& names,
                                  const std::string& alias) {
  TransformStmt out = stmt;
  std::vector<lang::Field> carried;
  for (const auto& g : carried_identity(stmt, names)) {
    auto named = std::find_if(stmt.fields.begin(), stmt.fields.end(),
                              [&](const lang::Field& f) { return f.name == g; });
    if (named != stmt.fields.end()) {
      const auto& e = named->expr;
      bool same = e.is_column && e.columns.size() == 1 && e.columns[0].column == g &&
                  (!e.columns[0].qualifier || *e.columns[0].qualifier == alias);
      if (!same)
        refuse(
            ErrorCode::validation,
            fmt::format("field \"{}\" at {} has the name of column \"{}\" of {}, which "
                        "identifies its rows and which the target carries as its key; "
                        "rename the field",
                        g, where_at(stmt, named->name_position), g, names.upstream->target_name()));
      continue;
    }
    std::string text = base::ident(alias) + "." + base::ident(g);
    lang::Field f;
    f.name = g;
    f.expr = lang::parse_expression(text, 0, text.size());
    carried.push_back(std::move(f));
  }
  out.fields.insert(out.fields.begin(), carried.begin(), carried.end());
  return out;
}

}  // namespace

TransformDef validate_transform(pg::Connection& conn, catalog::Store& store,
                                const TransformStmt& given, const ValidateContext& ctx) {
  TransformDef def;
  def.target_schema = given.target.schema.value_or(ctx.target_schema);
  def.target_table = given.target.name;
  check_target_name(given, def.target_schema);
  Names names = load_names(conn, store, given, def.target_schema, ctx);
  if (!ctx.resuming) check_target_free(given, def.target_schema, names);
  const TableDescription& src = resolve_source(given, names);
  def.source_schema = src.schema;
  def.source_table = src.name;
  def.alias = given.alias.value_or(src.name);
  const TransformStmt carried = with_upstream_group(given, names, def.alias);
  def.identity = ctx.built ? ctx.built->identity : carried_identity(given, names);
  catalog::Relationships relationships(store.schema());
  const TransformStmt stmt =
      expand_relationships(conn, relationships, carried, src, def.alias, key_names(carried, src));
  def.key = key_columns(stmt, src);
  Scope scope;
  scope.tables.push_back({def.alias, src});
  bind_joins(conn, store, stmt, def.target_schema, scope, def);
  def.adopted = given.adopt_existing;
  if (def.adopted) check_reads_other_tables(scope, def);
  std::vector<const TableDescription*> read_tables;
  for (const auto& e : scope.tables) read_tables.push_back(&e.table);
  check_privileges(conn, read_tables, ctx.built ? "" : def.target_schema,
                   base::qualified(def.target_schema, def.target_table));
  for (const auto& g : stmt.group_by) scope.resolve(stmt, g.expr, "GROUP BY item");
  for (const auto& f : stmt.fields)
    scope.resolve(stmt, f.expr, fmt::format("field \"{}\"", f.name));
  if (stmt.where) scope.resolve(stmt, *stmt.where, "WHERE predicate");
  finish_join_reads(scope, def);
  bool aggregate = !stmt.group_by.empty() || any_aggregate_field(stmt);
  def.without_source_index = stmt.without_source_index;
  if (aggregate) {
    def.shape = catalog::Shape::aggregate;
    def.compare_group_text = true;
    resolve_group(stmt, src, scope, def);
    def.ledger = ledger_columns(stmt, src, scope, def);
  }
  settle_held_joins(conn, stmt, def, aggregate, ctx);
  def.rejecting_joins = where_rejecting_joins(stmt, scope, def);
  check_fan_key(stmt, def, aggregate);
  check_field_names(stmt, aggregate ? def.group : def.target_key(), aggregate);
  check_upstream(names, src, def.key);
  def.reads = read_columns(scope, src, def.key);
  type_expressions(conn, stmt, def);
  if (aggregate && !stmt.without_source_index) check_source_index(conn, src, def);
  if (!stmt.without_source_index) check_join_indexes(scope, def);
  def.statement = normalized_statement(def);
  return def;
}

std::string normalized_statement(const TransformDef& def) {
  using base::ident;
  std::string out = fmt::format(
      "TRANSFORM {}{} FROM {} AS {} KEY ({}) SELECT ",
      base::qualified(def.target_schema, def.target_table),
      def.adopted ? " ADOPT EXISTING TABLE" : "",
      base::qualified(def.source_schema, def.source_table), ident(def.alias),
      base::join<Column>(def.key, ", ", [](const Column& c) { return base::ident(c.name); }));
  out.resize(out.size() - std::string(" SELECT ").size());
  for (const auto& j : def.joins) out += catalog::join_item(j, j.left_outer);
  if (def.shape != catalog::Shape::aggregate) {
    if (def.without_source_index && !def.joins.empty()) out += " WITHOUT SOURCE INDEX";
    out += " SELECT ";
  } else {
    if (!def.group.empty()) out += " GROUP BY ";
    for (size_t i = 0; i < def.group.size(); ++i) {
      out += i ? ", " : "";
      if (def.group_is_expression(i))
        out += "(" + def.group_exprs[i].sql + ") AS " + ident(def.group[i].name);
      else if (!def.joins.empty())  // a bare name may be ambiguous over the joined tables
        out += ident(def.alias) + "." + ident(def.group[i].name);
      else
        out += ident(def.group[i].name);
    }
    if (def.without_source_index) out += " WITHOUT SOURCE INDEX";
    out += " SELECT ";
  }
  // A GROUP BY without fields (a SELECT DISTINCT) has no SELECT list.
  if (def.fields.empty()) out.resize(out.size() - std::string(" SELECT ").size());
  for (size_t i = 0; i < def.fields.size(); ++i)
    out += (i ? ", " : "") + def.fields[i].sql + " AS " + ident(def.fields[i].name);
  if (def.where_sql) out += " WHERE " + *def.where_sql;
  return out;
}

}  // namespace trellis::bind
