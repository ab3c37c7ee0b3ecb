// System-catalog reads of a table ADOPT EXISTING TABLE compares; see
// table_shape.hpp.
#include "bind/table_shape.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "bind/table_description.hpp"

namespace trellis::bind {

namespace {

const char* kRelation =
    "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), c.relkind, "
    "EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = c.oid OR i.inhparent = c.oid), "
    "c.relrowsecurity AND c.relforcerowsecurity, pg_has_role(current_user, c.relowner, 'MEMBER'), "
    "quote_ident(pg_get_userbyid(c.relowner)), quote_ident(current_user) "
    "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1::oid";

const std::string kColumns =
    std::string("SELECT a.attname, format_type(a.atttypid, a.atttypmod), ") + kColumnCollation +
    ", quote_ident(a.attname), a.attnotnull, pg_get_expr(d.adbin, d.adrelid), "
    "a.attgenerated <> '', a.attidentity FROM pg_attribute a " +
    kColumnTypeJoins +
    " LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
    "WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum";

const char* kIndexes =
    "SELECT quote_ident(ci.relname), i.indisunique, i.indisprimary, i.indnullsnotdistinct, "
    "i.indpred IS NOT NULL, i.indexprs IS NOT NULL, "
    "to_jsonb(ARRAY(SELECT coalesce(a.attname, '') FROM unnest(i.indkey::int2[]) WITH "
    "ORDINALITY k(n, p) LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n "
    "WHERE k.p <= i.indnkeyatts ORDER BY k.p))::text, "
    "coalesce((SELECT quote_ident(con.conname) FROM pg_constraint con WHERE con.conindid = "
    "i.indexrelid AND con.conrelid = i.indrelid LIMIT 1), '') "
    "FROM pg_index i JOIN pg_class ci ON ci.oid = i.indexrelid WHERE i.indrelid = $1::oid "
    "ORDER BY ci.relname";

const char* kConstraints =
    "SELECT quote_ident(con.conname), con.contype, pg_get_constraintdef(con.oid), "
    "quote_ident(n.nspname) || '.' || quote_ident(c.relname), con.conrelid = $1::oid "
    "FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid "
    "JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE (con.conrelid = $1::oid AND con.contype IN ('c', 'f', 'x')) "
    "OR (con.confrelid = $1::oid AND con.contype = 'f') ORDER BY con.conname";

// tgtype bits: 1 FOR EACH ROW, 2 BEFORE, 64 INSTEAD OF.
const char* kTriggers =
    "SELECT quote_ident(tgname), (tgtype & 1) <> 0 AND (tgtype & 66) <> 0 FROM pg_trigger "
    "WHERE tgrelid = $1::oid AND NOT tgisinternal ORDER BY tgname";

}  // namespace

const ShapeColumn* TableShape::find(const std::string& column) const {
  for (const auto& c : columns)
    if (c.column.name == column) return &c;
  return nullptr;
}

const ShapeIndex* TableShape::primary_key() const {
  for (const auto& ix : indexes)
    if (ix.primary) return &ix;
  return nullptr;
}

std::optional<TableShape> describe_shape(pg::Connection& conn, const std::string& table) {
  auto oid = conn.exec("SELECT to_regclass($1)::oid", {table}).get_opt(0, 0);
  if (!oid) return std::nullopt;
  std::vector<pg::Param> params = {*oid};
  auto res = conn.pipeline({{kRelation, params},
                            {kColumns, params},
                            {kIndexes, params},
                            {kConstraints, params},
                            {kTriggers, params}});
  const auto& rel = res.at(0);
  if (rel.rows() == 0) return std::nullopt;
  TableShape t;
  t.quoted = rel.get(0, 0);
  t.relkind = rel.get(0, 1)[0];
  t.inherits = rel.get_bool(0, 2);
  t.forced_rls = rel.get_bool(0, 3);
  t.owned = rel.get_bool(0, 4);
  t.owner_quoted = rel.get(0, 5);
  t.role_quoted = rel.get(0, 6);
  const auto& cols = res.at(1);
  for (int i = 0; i < cols.rows(); ++i) {
    ShapeColumn c;
    c.column = {cols.get(i, 0), cols.get(i, 1), cols.get(i, 2), false};
    c.quoted = cols.get(i, 3);
    c.not_null = cols.get_bool(i, 4);
    c.default_sql = cols.get_opt(i, 5);
    c.generated = cols.get_bool(i, 6);
    std::string identity = cols.get(i, 7);
    c.identity = identity.empty() ? 0 : identity[0];
    t.columns.push_back(std::move(c));
  }
  const auto& ixs = res.at(2);
  for (int i = 0; i < ixs.rows(); ++i) {
    ShapeIndex ix;
    ix.quoted = ixs.get(i, 0);
    ix.unique = ixs.get_bool(i, 1);
    ix.primary = ixs.get_bool(i, 2);
    ix.nulls_not_distinct = ixs.get_bool(i, 3);
    ix.partial = ixs.get_bool(i, 4);
    ix.expressions = ixs.get_bool(i, 5);
    ix.columns = nlohmann::json::parse(ixs.get(i, 6)).get<std::vector<std::string>>();
    ix.constraint = ixs.get(i, 7);
    t.indexes.push_back(std::move(ix));
  }
  const auto& cons = res.at(3);
  for (int i = 0; i < cons.rows(); ++i)
    t.constraints.push_back(
        {cons.get(i, 0), cons.get(i, 1)[0], cons.get(i, 2), cons.get(i, 3), cons.get_bool(i, 4)});
  const auto& trg = res.at(4);
  for (int i = 0; i < trg.rows(); ++i) t.triggers.push_back({trg.get(i, 0), trg.get_bool(i, 1)});
  return t;
}

long count_rows_up_to(pg::Connection& conn, const std::string& table, long limit) {
  return conn
      .exec(fmt::format("SELECT count(*) FROM (SELECT FROM {} LIMIT {}) __rows", table, limit))
      .get_int(0, 0);
}

}  // namespace trellis::bind
