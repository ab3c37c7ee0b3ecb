// Catalog reads and writes of relationships; see relationships.hpp.
#include "catalog/relationships.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"

namespace trellis::catalog {

namespace {

constexpr const char* kColumns =
    "id, name, from_schema, from_table, from_col, to_schema, to_table, to_col, cardinality, "
    "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')";

}  // namespace

std::vector<Relationship> Relationships::read(pg::Connection& conn, const std::string& where,
                                              const std::vector<pg::Param>& params) {
  auto res = conn.exec(fmt::format("SELECT {} FROM {} WHERE {} ORDER BY id", kColumns,
                                   base::qualified(schema_, "relationships"), where),
                       params);
  std::vector<Relationship> out;
  for (int i = 0; i < res.rows(); ++i) {
    Relationship r;
    r.id = static_cast<int>(res.get_int(i, 0));
    r.name = res.get(i, 1);
    r.from_schema = res.get(i, 2);
    r.from_table = res.get(i, 3);
    r.from_col = res.get(i, 4);
    r.to_schema = res.get(i, 5);
    r.to_table = res.get(i, 6);
    r.to_col = res.get(i, 7);
    r.to_one = res.get(i, 8) == "to_one";
    r.created_at = res.get(i, 9);
    out.push_back(std::move(r));
  }
  return out;
}

bool Relationships::add(pg::Connection& conn, Relationship& r) {
  auto res = conn.exec(
      fmt::format("INSERT INTO {} (name, from_schema, from_table, from_col, to_schema, to_table, "
                  "to_col, cardinality) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT "
                  "(from_schema, from_table, name) DO NOTHING RETURNING id",
                  base::qualified(schema_, "relationships")),
      {r.name, r.from_schema, r.from_table, r.from_col, r.to_schema, r.to_table, r.to_col,
       r.cardinality()});
  if (res.rows() == 0) return false;
  r = read(conn, "id = $1", {res.get(0, 0)}).front();
  return true;
}

bool Relationships::remove(pg::Connection& conn, const std::string& from_schema,
                           const std::string& from_table, const std::string& name) {
  auto res = conn.exec(
      fmt::format("DELETE FROM {} WHERE from_schema = $1 AND from_table = $2 AND name = $3",
                  base::qualified(schema_, "relationships")),
      {from_schema, from_table, name});
  return res.affected() > 0;
}

std::vector<Relationship> Relationships::all(pg::Connection& conn) {
  return read(conn, "true", {});
}

std::optional<Relationship> Relationships::find(pg::Connection& conn,
                                                const std::string& from_schema,
                                                const std::string& from_table,
                                                const std::string& name) {
  auto found = read(conn, "from_schema = $1 AND from_table = $2 AND name = $3",
                    {from_schema, from_table, name});
  if (found.empty()) return std::nullopt;
  return found.front();
}

}  // namespace trellis::catalog
