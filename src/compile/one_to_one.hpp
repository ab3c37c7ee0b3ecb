// SQL for a 1-1 transform: target DDL, the two-statement re-derive of the keys
// on the current page (lock, then read and write: invariant I1), the build's
// keyset chunks, and the oracle query that tests compare the target against.
#pragma once

#include <string>

#include "catalog/definition.hpp"

namespace trellis::compile {

// The per-connection temporary table a page's keys are gathered in.
inline constexpr const char* kPageTable = "pg_temp.trellis_page";
std::string create_page_table_sql();

struct OneToOneSql {
  std::string create_target;  // CREATE TABLE for the target
  // Locks the target rows of the page's keys (placeholders for absent ones),
  // in key order. No source read.
  std::string lock;
  // Reads the source rows of the page's keys, updates changed target rows and
  // deletes rows whose source row is gone or filtered out. Returns (updated, deleted).
  std::string derive;
  // Adds every key the target holds to the page (after a TRUNCATE of the source).
  std::string page_all_target_keys;
  // Build: $1 = cursor (text[] or NULL), $2 = chunk size. Returns the chunk's
  // last key, or no row when fewer than $2 keys remain.
  std::string source_chunk_bound;
  std::string target_chunk_bound;
  // Build: fill the page with keys in ($1, $2] ($1/$2 may be NULL for open ends).
  std::string page_source_range;
  std::string page_target_range;
  std::string oracle_select;  // the definition as a plain SELECT (key columns, then fields)
};

OneToOneSql compile_one_to_one(const catalog::TransformDef& def);

}  // namespace trellis::compile
