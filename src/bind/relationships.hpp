// Relationships at define (README, "Relationships"): declaring one checks
// both ends and decides whether it is to-one; a transform that reads a
// relationship's path `name.column` gets the LEFT JOIN it stands for, and a
// transform without GROUP BY that aggregates a to-many path keeps one row
// per source row (it becomes a GROUP BY of the source key, its other fields
// grouped with it). What comes out is an ordinary statement with joins,
// bound like any other; its stored form names the joins, so it does not
// depend on the relationship after define.
#pragma once

#include <string>

#include "bind/table_description.hpp"
#include "catalog/relationships.hpp"
#include "lang/statement.hpp"
#include "pg/connection.hpp"

namespace trellis::bind {

// Resolves and checks a RELATIONSHIP statement (unqualified tables in
// `default_schema`): both tables and columns exist, the columns have one
// type and a deterministic collation, the name is free of the FROM table's
// name and of the reserved "__". To-one when the TO column is the TO
// table's primary key or a unique NOT NULL column.
catalog::Relationship bind_relationship(pg::Connection& conn, const lang::RelationshipStmt& stmt,
                                        const std::string& default_schema);

// The statement with every relationship of the source `src` (read as
// `alias`) that its expressions read as `name.column` (a name that is no
// alias of the statement) joined as `LEFT JOIN to_table AS name ON
// name.to_col = alias.from_col`, and, when such a relationship is to-many
// and the statement has no GROUP BY but aggregates, grouped by the source
// key (`key`) and its non-aggregate fields.
lang::TransformStmt expand_relationships(pg::Connection& conn, catalog::Relationships& rels,
                                         const lang::TransformStmt& stmt,
                                         const TableDescription& src, const std::string& alias,
                                         const std::vector<std::string>& key);

}  // namespace trellis::bind
