// Relationships as the catalog stores them (migration 0010): a named link
// from a column of one table to a column of another. Declaring one only
// records it; a transform that reads `name.column` gets the LEFT JOIN it
// stands for written into its definition (bind/relationships), so nothing
// here takes part in the data path.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pg/connection.hpp"

namespace trellis::catalog {

struct Relationship {
  int id = 0;
  std::string name;
  std::string from_schema, from_table, from_col;
  std::string to_schema, to_table, to_col;
  bool to_one = false;
  std::string created_at;  // ISO 8601, UTC

  std::string cardinality() const { return to_one ? "to_one" : "to_many"; }
};

class Relationships {
 public:
  explicit Relationships(std::string schema) : schema_(std::move(schema)) {}
  // Records `r` (its id and created_at filled in); false when the FROM
  // table already has a relationship of that name.
  bool add(pg::Connection& conn, Relationship& r);
  // Removes it; false when there was none.
  bool remove(pg::Connection& conn, const std::string& from_schema, const std::string& from_table,
              const std::string& name);
  // Every relationship, oldest first.
  std::vector<Relationship> all(pg::Connection& conn);
  // The relationship `name` of table from_schema.from_table, if any.
  std::optional<Relationship> find(pg::Connection& conn, const std::string& from_schema,
                                   const std::string& from_table, const std::string& name);

 private:
  std::vector<Relationship> read(pg::Connection& conn, const std::string& where,
                                 const std::vector<pg::Param>& params);
  std::string schema_;
};

}  // namespace trellis::catalog
