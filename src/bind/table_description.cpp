// System-catalog reads of the tables a statement names; see
// table_description.hpp.
#include "bind/table_description.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace trellis::bind {

const char* const kColumnCollation =
    "CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation THEN "
    "quote_ident(cn.nspname) || '.' || quote_ident(co.collname) ELSE '' END";

const char* const kColumnTypeJoins =
    "JOIN pg_type t ON t.oid = a.atttypid "
    "LEFT JOIN pg_collation co ON co.oid = a.attcollation "
    "LEFT JOIN pg_namespace cn ON cn.oid = co.collnamespace";

namespace {

// Whether a type (pg_type `t`) has a default btree opclass: itself, its
// domain base, an enum, or an array of such.
const char* kComparable = R"(
  (SELECT EXISTS (SELECT 1 FROM pg_opclass oc JOIN pg_am am ON am.oid = oc.opcmethod
                   WHERE am.amname = 'btree' AND oc.opcdefault
                     AND oc.opcintype = CASE WHEN bt.typcategory = 'A' THEN 'anyarray'::regtype
                                             WHEN bt.typtype = 'e' THEN 'anyenum'::regtype
                                             ELSE bt.oid END)
          AND (bt.typcategory <> 'A' OR EXISTS (
                SELECT 1 FROM pg_opclass oc JOIN pg_am am ON am.oid = oc.opcmethod
                 JOIN pg_type et ON et.oid = bt.typelem
                 WHERE am.amname = 'btree' AND oc.opcdefault
                   AND oc.opcintype = CASE WHEN et.typtype = 'e' THEN 'anyenum'::regtype
                                           ELSE et.oid END))
   FROM pg_type bt WHERE bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END))";

// "FROM (VALUES (1, $1::name, $2::name), ...) w(ord, nsp, rel) JOIN ... c":
// the named relations that exist, `w.ord` their 1-based place in the list.
std::string named_relations(std::size_t count) {
  std::string values;
  for (std::size_t i = 0; i < count; ++i)
    values +=
        fmt::format("{}({}, ${}::name, ${}::name)", i ? ", " : "", i + 1, 2 * i + 1, 2 * i + 2);
  return fmt::format(
      " FROM (VALUES {}) w(ord, nsp, rel) JOIN pg_namespace n ON n.nspname = w.nsp "
      "JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = w.rel ",
      values);
}

std::string relations_sql(const std::string& named) {
  return "SELECT w.ord, c.oid, c.relkind, c.relrowsecurity AND (c.relforcerowsecurity OR "
         "pg_get_userbyid(c.relowner) <> current_user) AND NOT (SELECT rolbypassrls OR rolsuper "
         "FROM pg_roles WHERE rolname = current_user), "
         "EXISTS (SELECT 1 FROM pg_subscription_rel s WHERE s.srrelid = c.oid), "
         "NOT c.relispartition AND c.relkind <> 'p' AND EXISTS (SELECT 1 FROM pg_inherits i "
         "WHERE i.inhrelid = c.oid OR i.inhparent = c.oid), "
         "CASE WHEN c.relispartition THEN (SELECT quote_ident(rn.nspname) || '.' || "
         "quote_ident(r.relname) FROM pg_class r JOIN pg_namespace rn ON rn.oid = r.relnamespace "
         "WHERE r.oid = pg_partition_root(c.oid)) END" +
         named;
}

std::string columns_sql(const std::string& named) {
  return std::string(
             "SELECT w.ord, c.oid, a.attname, format_type(a.atttypid, a.atttypmod), "
             "(SELECT bt.typname FROM pg_type bt WHERE bt.oid = CASE WHEN t.typtype = 'd' "
             "THEN t.typbasetype ELSE t.oid END), a.attnotnull, ") +
         kColumnCollation + ", coalesce(co.collisdeterministic, true), t.typtype = 'e', " +
         kComparable + ", a.attgenerated <> '', a.attnum" + named +
         "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped " +
         kColumnTypeJoins + " ORDER BY w.ord, a.attnum";
}

// One row per column of each valid index (NULL name for an expression).
std::string index_columns_sql(const std::string& named) {
  return "SELECT w.ord, c.oid, i.indexrelid, i.indisunique, i.indisprimary, i.indpred IS NOT NULL, "
         "i.indexprs IS NOT NULL, i.indnkeyatts, a.attname" +
         named +
         "JOIN pg_index i ON i.indrelid = c.oid AND i.indisvalid "
         "CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY k(attnum, pos) "
         "LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
         "ORDER BY w.ord, i.indexrelid, k.pos";
}

std::size_t place(const pg::Result& res, int row) {
  return static_cast<std::size_t>(res.get_int(row, 0)) - 1;
}

// The description a row of the column or index query belongs to; nullptr
// when the relation of that name changed between the statements.
TableDescription* owner(std::vector<std::optional<TableDescription>>& out, const pg::Result& res,
                        int row) {
  auto& d = out[place(res, row)];
  if (!d || d->oid != static_cast<unsigned>(res.get_int(row, 1))) return nullptr;
  return &*d;
}

// The primary key and plain unique keys: unique indexes with neither a
// predicate nor an expression (so every column has a name).
void derive_keys(TableDescription& t) {
  for (const auto& ix : t.indexes) {
    if (!ix.unique || ix.partial || ix.expressions) continue;
    std::vector<std::string> names;
    for (const auto& c : ix.columns) names.push_back(c.value_or(""));
    if (ix.primary) t.primary_key = names;
    t.unique_keys.push_back(std::move(names));
  }
}

}  // namespace

const DescribedColumn* TableDescription::find(const std::string& column) const {
  for (const auto& c : columns)
    if (c.column.name == column) return &c;
  return nullptr;
}

bool TableDescription::has_index_leading_with(const std::vector<std::string>& wanted) const {
  if (wanted.empty()) return false;
  std::vector<std::string> sorted_wanted = wanted;
  std::sort(sorted_wanted.begin(), sorted_wanted.end());
  for (const auto& ix : indexes) {
    if (ix.partial || ix.key_count < wanted.size()) continue;
    // The leading keys: a column by its name, an expression by its text
    // (none when describe_index_keys has not read it).
    std::vector<std::string> leading;
    for (std::size_t i = 0; i < wanted.size(); ++i)
      leading.push_back(ix.columns[i]             ? *ix.columns[i]
                        : i < ix.key_texts.size() ? ix.key_texts[i]
                                                  : std::string());
    std::sort(leading.begin(), leading.end());
    if (leading == sorted_wanted) return true;
  }
  return false;
}

std::vector<std::optional<TableDescription>> describe_tables(pg::Connection& conn,
                                                             const std::vector<TableName>& tables) {
  std::vector<std::optional<TableDescription>> out(tables.size());
  if (tables.empty()) return out;
  std::vector<pg::Param> params;
  for (const auto& t : tables) {
    params.push_back(t.schema);
    params.push_back(t.name);
  }
  std::string named = named_relations(tables.size());
  auto results = conn.pipeline({{relations_sql(named), params},
                                {columns_sql(named), params},
                                {index_columns_sql(named), params}});
  const pg::Result& rel = results.at(0);
  const pg::Result& cols = results.at(1);
  const pg::Result& keys = results.at(2);
  for (int i = 0; i < rel.rows(); ++i) {
    TableDescription d;
    d.oid = static_cast<unsigned>(rel.get_int(i, 1));
    d.schema = tables[place(rel, i)].schema;
    d.name = tables[place(rel, i)].name;
    d.relkind = rel.get(i, 2)[0];
    d.rls_applies = rel.get_bool(i, 3);
    d.subscribed = rel.get_bool(i, 4);
    d.inherits = rel.get_bool(i, 5);
    d.partition_of = rel.get_opt(i, 6).value_or("");
    out[place(rel, i)] = std::move(d);
  }
  for (int i = 0; i < cols.rows(); ++i) {
    TableDescription* d = owner(out, cols, i);
    if (!d) continue;
    DescribedColumn c;
    c.column = {cols.get(i, 2), cols.get(i, 3), cols.get(i, 6), cols.get_bool(i, 9)};
    c.base_type = cols.get(i, 4);
    c.not_null = cols.get_bool(i, 5);
    c.deterministic = cols.get_bool(i, 7);
    c.is_enum = cols.get_bool(i, 8);
    c.generated = cols.get_bool(i, 10);
    c.attnum = static_cast<int>(cols.get_int(i, 11));
    d->columns.push_back(std::move(c));
  }
  std::string last_index;
  for (int i = 0; i < keys.rows(); ++i) {
    TableDescription* d = owner(out, keys, i);
    if (!d) continue;
    std::string index = keys.get(i, 0) + ":" + keys.get(i, 2);
    if (index != last_index) {
      DescribedIndex ix;
      ix.unique = keys.get_bool(i, 3);
      ix.primary = keys.get_bool(i, 4);
      ix.partial = keys.get_bool(i, 5);
      ix.expressions = keys.get_bool(i, 6);
      ix.key_count = static_cast<std::size_t>(keys.get_int(i, 7));
      ix.oid = static_cast<unsigned>(keys.get_int(i, 2));
      d->indexes.push_back(std::move(ix));
      last_index = index;
    }
    d->indexes.back().columns.push_back(keys.get_opt(i, 8));
  }
  for (auto& d : out)
    if (d) derive_keys(*d);
  return out;
}

void describe_index_keys(pg::Connection& conn, TableDescription& t) {
  auto res = conn.exec(
      "SELECT i.indexrelid, pg_get_indexdef(i.indexrelid, k.pos::int, true) FROM pg_index i "
      "CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY k(attnum, pos) "
      "WHERE i.indrelid = $1::oid AND i.indisvalid AND i.indexprs IS NOT NULL "
      "ORDER BY i.indexrelid, k.pos",
      {std::to_string(t.oid)});
  for (auto& ix : t.indexes) ix.key_texts.clear();
  for (int i = 0; i < res.rows(); ++i)
    for (auto& ix : t.indexes)
      if (ix.oid == static_cast<unsigned>(res.get_int(i, 0))) ix.key_texts.push_back(res.get(i, 1));
}

std::optional<TableDescription> describe_table(pg::Connection& conn, const std::string& schema,
                                               const std::string& name) {
  return describe_tables(conn, {{schema, name}}).front();
}

std::string view_column_sql() {
  return std::string("SELECT format_type(a.atttypid, a.atttypmod), ") + kColumnCollation + ", " +
         kComparable + " FROM pg_attribute a " + kColumnTypeJoins +
         " WHERE a.attrelid = ('pg_temp.' || quote_ident($1))::regclass AND a.attname = 'f'";
}

catalog::Column view_column_from(const pg::Result& res, const std::string& name) {
  return {name, res.get(0, 0), res.get(0, 1), res.get_bool(0, 2)};
}

catalog::Column view_column(pg::Connection& conn, const std::string& view,
                            const std::string& name) {
  return view_column_from(conn.exec(view_column_sql(), {view}), name);
}

}  // namespace trellis::bind
