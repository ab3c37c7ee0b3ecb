// System-catalog reads for define; see introspect.hpp.
#include "bind/introspect.hpp"

#include "pg/arrays.hpp"

namespace trellis::bind {

namespace {

// Whether a type (by oid expression) has a default btree opclass: itself, its
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

std::vector<std::string> split_names(const std::string& text) {
  // array_to_string(..., E'\x1f') joined names
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == '\x1f') {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

}  // namespace

const TableColumn* TableInfo::find(const std::string& column) const {
  for (const auto& c : columns)
    if (c.column.name == column) return &c;
  return nullptr;
}

bool relation_exists(pg::Connection& conn, const std::string& schema, const std::string& name) {
  return conn
      .exec(
          "SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = "
          "c.relnamespace WHERE n.nspname = $1 AND c.relname = $2)",
          {schema, name})
      .get_bool(0, 0);
}

std::optional<TableInfo> describe_table(pg::Connection& conn, const std::string& schema,
                                        const std::string& name) {
  auto rel = conn.exec(
      "SELECT c.oid, c.relkind, c.relrowsecurity AND (c.relforcerowsecurity OR "
      "pg_get_userbyid(c.relowner) <> current_user) AND NOT (SELECT rolbypassrls OR rolsuper FROM "
      "pg_roles WHERE rolname = current_user), "
      "EXISTS (SELECT 1 FROM pg_subscription_rel s WHERE s.srrelid = c.oid), "
      "c.relispartition OR EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = c.oid OR "
      "i.inhparent = c.oid) "
      "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND "
      "c.relname = $2",
      {schema, name});
  if (rel.rows() == 0) return std::nullopt;
  TableInfo info;
  info.oid = static_cast<unsigned>(rel.get_int(0, 0));
  info.schema = schema;
  info.name = name;
  info.relkind = rel.get(0, 1)[0];
  info.rls_applies = rel.get_bool(0, 2);
  info.subscribed = rel.get_bool(0, 3);
  info.in_hierarchy = rel.get_bool(0, 4);
  std::string oid = rel.get(0, 0);
  auto cols = conn.exec(
      std::string("SELECT a.attname, format_type(a.atttypid, a.atttypmod), "
                  "(SELECT bt.typname FROM pg_type bt WHERE bt.oid = CASE WHEN t.typtype = 'd' "
                  "THEN t.typbasetype ELSE t.oid END), a.attnotnull, "
                  "CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation THEN "
                  "quote_ident(cn.nspname) || '.' || quote_ident(co.collname) ELSE '' END, "
                  "coalesce(co.collisdeterministic, true), t.typtype = 'e', ") +
          kComparable +
          " FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
          "LEFT JOIN pg_collation co ON co.oid = a.attcollation "
          "LEFT JOIN pg_namespace cn ON cn.oid = co.collnamespace "
          "WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
      {oid});
  for (int i = 0; i < cols.rows(); ++i) {
    TableColumn c;
    c.column = {cols.get(i, 0), cols.get(i, 1), cols.get(i, 4), cols.get_bool(i, 7)};
    c.base_type = cols.get(i, 2);
    c.not_null = cols.get_bool(i, 3);
    c.deterministic = cols.get_bool(i, 5);
    c.is_enum = cols.get_bool(i, 6);
    info.columns.push_back(c);
  }
  auto keys = conn.exec(
      "SELECT i.indisprimary, array_to_string(array_agg(a.attname ORDER BY k.ord), E'\\x1f') "
      "FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY k(attnum, ord) "
      "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
      "WHERE i.indrelid = $1::oid AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL "
      "AND i.indisvalid GROUP BY i.indexrelid, i.indisprimary",
      {oid});
  for (int i = 0; i < keys.rows(); ++i) {
    auto names = split_names(keys.get(i, 1));
    if (keys.get_bool(i, 0)) info.primary_key = names;
    info.unique_keys.push_back(names);
  }
  return info;
}

catalog::Column view_column(pg::Connection& conn, const std::string& view,
                            const std::string& name) {
  auto res = conn.exec(
      std::string("SELECT format_type(a.atttypid, a.atttypmod), "
                  "CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation THEN "
                  "quote_ident(cn.nspname) || '.' || quote_ident(co.collname) ELSE '' END, ") +
          kComparable +
          " FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
          "LEFT JOIN pg_collation co ON co.oid = a.attcollation "
          "LEFT JOIN pg_namespace cn ON cn.oid = co.collnamespace "
          "WHERE a.attrelid = ('pg_temp.' || quote_ident($1))::regclass AND a.attname = 'f'",
      {view});
  return {name, res.get(0, 0), res.get(0, 1), res.get_bool(0, 2)};
}

std::vector<CalledFunction> functions_in_view(pg::Connection& conn, const std::string& view) {
  auto res = conn.exec(
      "SELECT DISTINCT p.oid::regprocedure::text, p.provolatile, p.prokind, "
      "coalesce(a.aggkind, 'n'), p.proretset FROM pg_rewrite r "
      "CROSS JOIN LATERAL regexp_matches(r.ev_action::text, "
      "':(?:funcid|opfuncid|aggfnoid|winfnoid) ([0-9]+)', 'g') m "
      "JOIN pg_proc p ON p.oid = m[1]::oid LEFT JOIN pg_aggregate a ON a.aggfnoid = p.oid "
      "WHERE r.ev_class = ('pg_temp.' || quote_ident($1))::regclass "
      // A cast through text I/O of a column (ts::text) calls the column type's
      // output and the result type's input function.
      "UNION SELECT p.oid::regprocedure::text, p.provolatile, p.prokind, 'n', p.proretset "
      "FROM pg_rewrite r CROSS JOIN LATERAL regexp_matches(r.ev_action::text, "
      "'\\{COERCEVIAIO :arg \\{VAR [^{}]*:vartype ([0-9]+)[^{}]*\\} :resulttype ([0-9]+)', 'g') m "
      "JOIN pg_type tin ON tin.oid = m[1]::oid JOIN pg_type tout ON tout.oid = m[2]::oid "
      "JOIN pg_proc p ON p.oid IN (tin.typoutput, tout.typinput) "
      "WHERE r.ev_class = ('pg_temp.' || quote_ident($1))::regclass ORDER BY 1",
      {view});
  std::vector<CalledFunction> out;
  for (int i = 0; i < res.rows(); ++i)
    out.push_back(
        {res.get(i, 0), res.get(i, 1)[0], res.get(i, 2)[0], res.get(i, 3)[0], res.get_bool(i, 4)});
  return out;
}

bool has_index_leading_with(pg::Connection& conn, const TableInfo& table,
                            const std::vector<std::string>& columns) {
  std::string wanted = "{";
  for (size_t i = 0; i < columns.size(); ++i) {
    std::string c = columns[i];
    std::string escaped;
    for (char ch : c) {
      if (ch == '"' || ch == '\\') escaped += '\\';
      escaped += ch;
    }
    wanted += (i ? "," : "") + std::string("\"") + escaped + "\"";
  }
  wanted += "}";
  auto res = conn.exec(
      "SELECT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = $1::oid AND i.indisvalid AND "
      "i.indpred IS NULL AND "
      "i.indnkeyatts >= $3::int AND (SELECT array_agg(a.attname::text ORDER BY a.attname::text) "
      "FROM generate_series(0, $3::int - 1) pos JOIN pg_attribute a ON a.attrelid = i.indrelid "
      "AND a.attnum = i.indkey[pos]) = (SELECT array_agg(x ORDER BY x) FROM "
      "unnest($2::text[]) x))",
      {std::to_string(table.oid), wanted, std::to_string(columns.size())});
  return res.get_bool(0, 0);
}

}  // namespace trellis::bind
