// RELATIONSHIP and DROP RELATIONSHIP as catalog changes, and the listing.
// A relationship is only a name for a join: declaring one checks both ends
// and records it; transforms that read it hold the join in their own
// definition, so dropping it leaves them as they are.
#include "bind/relationships.hpp"

#include <fmt/format.h>

#include "api/instance.hpp"
#include "catalog/relationships.hpp"

namespace trellis::api {

namespace {

std::string address(const catalog::Relationship& r) {
  return r.from_schema + "." + r.from_table + "." + r.name;
}

}  // namespace

Applied define_relationship(Trellis::Impl& impl, const lang::RelationshipStmt& stmt) {
  auto conn = impl.pool.acquire();
  catalog::Relationship r = bind::bind_relationship(*conn, stmt, impl.options.target_schema);
  catalog::Relationships rels(impl.store.schema());
  if (!rels.add(*conn, r))
    throw Error(ErrorCode::conflict,
                fmt::format("{}.{} already has a relationship named {}; drop it first (DROP "
                            "RELATIONSHIP {}) or pick another name",
                            r.from_schema, r.from_table, r.name, address(r)));
  return {"relationship", address(r), r.cardinality()};
}

Applied drop_relationship(Trellis::Impl& impl, const lang::DropRelationshipStmt& stmt) {
  auto conn = impl.pool.acquire();
  std::string schema = stmt.from_table.schema.value_or(impl.options.target_schema);
  catalog::Relationships rels(impl.store.schema());
  rels.remove(*conn, schema, stmt.from_table.name, stmt.name);
  return {"drop_relationship", schema + "." + stmt.from_table.name + "." + stmt.name, "dropped"};
}

std::vector<Relationship> list_relationships(Trellis::Impl& impl) {
  auto conn = impl.pool.acquire();
  std::vector<Relationship> out;
  for (const auto& r : catalog::Relationships(impl.store.schema()).all(*conn))
    out.push_back({r.name, r.from_schema + "." + r.from_table, r.from_col,
                   r.to_schema + "." + r.to_table, r.to_col, r.cardinality(), r.created_at});
  return out;
}

}  // namespace trellis::api
