// Define-time typing through probes; see typing.hpp. Each probe runs under a
// savepoint, so a refused one leaves the transaction usable for the message;
// the savepoint, the probe and its release go out together in one pipeline.
#include "bind/typing.hpp"

#include <fmt/format.h>

#include "bind/incremental_plan.hpp"
#include "bind/probe_sql.hpp"
#include "bind/refusal.hpp"
#include "bind/table_description.hpp"
#include "lang/tokens.hpp"
#include "pg/sql_error.hpp"
#include "trellis/error.hpp"

namespace trellis::bind {

using catalog::Column;
using catalog::TransformDef;
using lang::Expr;
using lang::TransformStmt;

namespace {

struct CalledFunction {
  std::string signature;      // regprocedure text
  char volatility = 'i';      // pg_proc.provolatile
  char kind = 'f';            // pg_proc.prokind
  char aggregate_kind = 'n';  // pg_aggregate.aggkind for aggregates
  bool returns_set = false;
};

// Every function and operator function a temporary view calls, read from
// its stored query tree (built-in functions record no pg_depend rows).
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
// Explains PostgreSQL's refusal of an index probe in the language's terms.
std::string immutability_problem(const pg::SqlError& e, const Expr& expr) {
  std::string calls = expr.function_names.empty()
                          ? std::string()
                          : fmt::format(" (it calls: {})", fmt::join(expr.function_names, ", "));
  const std::string msg = e.what();
  if (msg.find("set-returning") != std::string::npos)
    return "calls a set-returning function" + calls +
           "; transform expressions must give one value per row";
  if (msg.find("aggregate") != std::string::npos)
    return "calls an aggregate function" + calls + "; it is not allowed here";
  if (msg.find("window") != std::string::npos)
    return "calls a window function" + calls + "; it is not allowed here";
  if (msg.find("IMMUTABLE") != std::string::npos)
    return "uses a function, operator or cast that is not immutable" + calls +
           "; transform expressions may only use immutable ones, so a re-derive always gives "
           "the same result (now(), random() and casts that depend on settings are refused)";
  return msg;
}

// Runs one probe statement; PostgreSQL's refusal becomes a validation error
// naming the expression, explained by `explain`.
template <typename Explain>
void probe(pg::Connection& conn, const std::string& statement, const std::string& what,
           const std::string& at, const std::string& text, Explain explain) {
  try {
    pg::Savepoint::around(conn, "trellis_probe", {{statement, {}}}, /*keep=*/true);
  } catch (const pg::SqlError& e) {
    if (!conn.healthy()) throw;
    refuse(ErrorCode::validation, fmt::format("{} at {} ({}) {}", what, at, text, explain(e)));
  }
}

std::string not_valid(const pg::SqlError& e) {
  return fmt::format("is not valid over the source: {}", e.what());
}

std::string grouping_problem(const pg::SqlError& e) {
  if (e.sqlstate() == "42803")
    return fmt::format(
        "is not a valid aggregate field: {}; every column outside GROUP BY must sit inside "
        "exactly one aggregate",
        e.what());
  return not_valid(e);
}

// Aggregate fields cannot go through an index probe (aggregates are not
// allowed there), so the functions the probe view calls are read from its
// stored query tree: every non-aggregate function must be immutable, and
// ordered-set and hypothetical-set aggregates are refused.
void check_aggregate_functions(pg::Connection& conn, const std::string& view,
                               const std::string& what, const std::string& at, const Expr& expr,
                               bool aggregates = true) {
  for (const auto& f : functions_in_view(conn, view)) {
    std::string problem;
    if (f.kind == 'a' && !aggregates)
      problem = "calls aggregate function " + f.signature + ", which a 1-1 field cannot";
    else if (f.returns_set)
      problem = "calls set-returning function " + f.signature;
    else if (f.kind == 'w')
      problem = "calls window function " + f.signature;
    else if (f.kind == 'a' && f.aggregate_kind != 'n')
      problem = "calls ordered-set aggregate " + f.signature + ", which is not supported";
    else if (f.kind != 'a' && f.volatility != 'i')
      problem = fmt::format(
          "calls {} function {}; transform expressions may only use immutable "
          "functions",
          f.volatility == 's' ? "stable" : "volatile", f.signature);
    if (!problem.empty())
      refuse(ErrorCode::validation, fmt::format("{} at {} ({}) {}", what, at, expr.text, problem));
  }
}

// A probe's result type that no table column can hold.
bool unstorable(const Column& col) {
  return col.type == "record" || col.type == "unknown" || col.type == "void";
}

// The facts about a probe view's column "f" a group value needs beyond
// its type: its base type's name and whether its collation is
// deterministic.
struct GroupValueFacts {
  std::string base_type;
  bool deterministic = true;
};

GroupValueFacts group_value_facts(pg::Connection& conn, const std::string& view) {
  auto res = conn.exec(
      "SELECT CASE WHEN t.typtype = 'd' THEN (SELECT b.typname FROM pg_type b WHERE b.oid = "
      "t.typbasetype) ELSE t.typname END, coalesce(co.collisdeterministic, true) "
      "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
      "LEFT JOIN pg_collation co ON co.oid = a.attcollation "
      "WHERE a.attrelid = ('pg_temp.' || quote_ident($1))::regclass AND a.attname = 'f'",
      {view});
  return {res.get(0, 0), res.get_bool(0, 1)};
}

// Types each GROUP BY expression (a probe view), checks that it can key a
// group (equality, no interval, a deterministic collation) and is
// immutable, and reads the index key PostgreSQL renders for it (a
// probe index over the stand-in of the source). The stand-in then gains a
// column per expression, named as its group column, so the fields' probe
// sees what the ledger holds: the source's columns and the group values.
void type_group_expressions(pg::Connection& conn, const TransformStmt& stmt, TransformDef& def) {
  for (size_t i = 0; i < def.group.size(); ++i) {
    if (!def.group_is_expression(i)) continue;
    const bool joined = !def.group_exprs[i].joined_alias.empty();
    // A joined table's column, typed from its table (resolve_group).
    if (joined && !def.group[i].type.empty()) {
      conn.exec(probe_group_column(def.alias, def.group[i]));
      continue;
    }
    const auto& item = stmt.group_by[i];
    std::string what = fmt::format("GROUP BY item \"{}\"", def.group[i].name);
    std::string at = where_at(stmt, item.expr.position);
    std::string view = "trellis_probe_g" + std::to_string(i);
    probe(conn,
          joined ? probe_view_over(view, def.from_clause(), def.group_exprs[i].sql)
                 : probe_field_view(view, def.source_schema, def.source_table, def.alias,
                                    def.group_exprs[i].sql),
          what, at, item.expr.text, not_valid);
    Column col = view_column(conn, view, def.group[i].name);
    GroupValueFacts facts = group_value_facts(conn, view);
    std::string problem;
    if (unstorable(col))
      problem = fmt::format("has type {}, which a table column cannot hold; cast it", col.type);
    else if (!col.comparable)
      problem = fmt::format(
          "has type {}, which has no default equality, so rows cannot be put into groups by it; "
          "cast it to a type that has one (such as text)",
          col.type);
    else if (facts.base_type == "interval")
      problem =
          "has type interval, whose equal values differ ('1 day' and '24 hours' are one group), "
          "so the group's value is not well defined; group by a normalized value such as "
          "extract(epoch from ...)";
    else if (!facts.deterministic)
      problem =
          "uses a nondeterministic collation, under which different values share a group; add "
          "a COLLATE clause with a deterministic collation";
    if (!problem.empty())
      refuse(ErrorCode::validation,
             fmt::format("{} at {} ({}) {}", what, at, item.expr.text, problem));
    if (joined) {
      // Over several tables no index probe fits: the view's query tree
      // tells the functions it calls, and no source index can lead with it.
      check_aggregate_functions(conn, view, what, at, item.expr, /*aggregates=*/false);
      def.group[i] = col;
      conn.exec(probe_group_column(def.alias, col));
      continue;
    }
    std::string index = "trellis_probe_gk" + std::to_string(i);
    probe(conn, probe_group_index(index, def.alias, def.group_exprs[i].sql), what, at,
          item.expr.text,
          [&](const pg::SqlError& e) { return immutability_problem(e, item.expr); });
    def.group_exprs[i].index_key =
        conn.exec("SELECT pg_get_indexdef(('pg_temp.' || quote_ident($1))::regclass, 1, true)",
                  {index})
            .get(0, 0);
    def.group[i] = col;
    conn.exec(probe_group_column(def.alias, col));
  }
}

}  // namespace

void type_expressions(pg::Connection& conn, const TransformStmt& stmt, TransformDef& def) {
  pg::Transaction txn(conn);
  conn.exec(probe_table(def.alias, def.source_schema, def.source_table));
  bool aggregate = def.shape == catalog::Shape::aggregate;
  if (aggregate) type_group_expressions(conn, stmt, def);
  for (size_t i = 0; i < stmt.fields.size(); ++i) {
    const auto& f = stmt.fields[i];
    std::string view = "trellis_probe_" + std::to_string(i);
    std::string what = fmt::format("field \"{}\"", f.name);
    std::string at = where_at(stmt, f.expr.position);
    if (aggregate) {
      probe(conn, probe_grouped_view(view, def.alias, f.expr.sql, def.group, def.joins), what, at,
            f.expr.text, grouping_problem);
      check_aggregate_functions(conn, view, what, at, f.expr);
    } else if (!def.joins.empty()) {
      // An expression over several tables fits no index probe; the view's
      // query tree tells the functions it calls.
      probe(conn, probe_view_over(view, def.from_clause(), f.expr.sql), what, at, f.expr.text,
            not_valid);
      check_aggregate_functions(conn, view, what, at, f.expr, /*aggregates=*/false);
    } else {
      probe(conn,
            probe_field_view(view, def.source_schema, def.source_table, def.alias, f.expr.sql),
            what, at, f.expr.text, not_valid);
      probe(conn, probe_immutable_expression(def.alias, f.expr.sql), what, at, f.expr.text,
            [&](const pg::SqlError& e) { return immutability_problem(e, f.expr); });
    }
    Column col = view_column(conn, view, f.name);
    if (unstorable(col))
      refuse(ErrorCode::validation,
             fmt::format("{} at {} has type {}, which a table column cannot hold; cast it to a "
                         "concrete type",
                         what, at, col.type));
    catalog::Field field;
    field.name = f.name;
    field.sql = f.expr.sql;
    field.column = col;
    def.fields.push_back(std::move(field));
  }
  if (stmt.where) {
    std::string at = where_at(stmt, stmt.where->position);
    if (!def.joins.empty()) {
      probe(conn, probe_where_over("trellis_probe_where", def.from_clause(), stmt.where->sql),
            "WHERE predicate", at, stmt.where->text, not_valid);
      check_aggregate_functions(conn, "trellis_probe_where", "WHERE predicate", at, *stmt.where,
                                /*aggregates=*/false);
    } else {
      probe(conn,
            probe_where_view("trellis_probe_where", def.source_schema, def.source_table, def.alias,
                             stmt.where->sql),
            "WHERE predicate", at, stmt.where->text, not_valid);
      probe(conn, probe_immutable_predicate(def.alias, stmt.where->sql), "WHERE predicate", at,
            stmt.where->text,
            [&](const pg::SqlError& e) { return immutability_problem(e, *stmt.where); });
    }
    def.where_sql = stmt.where->sql;
  }
  if (aggregate) plan_incremental(conn, def);
  // txn rolls back: the probe views never outlive validation
}

}  // namespace trellis::bind
