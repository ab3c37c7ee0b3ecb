// Random source schemas for the generative suite: one to three tables (some
// of them hash-partitioned, see episode.cpp's generate()) whose
// columns hold awkward values (NULLs, empty strings, int/numeric extremes,
// signed zeros, infinities, long TOASTed text) and whose group columns draw
// from tiny domains so rows keep colliding in and moving between groups.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace trellis::gen {

using Rng = std::mt19937_64;

// Uniform integer in [lo, hi].
int64_t uniform(Rng& rng, int64_t lo, int64_t hi);
bool chance(Rng& rng, double p);
template <class T>
const T& pick(Rng& rng, const std::vector<T>& items) {
  return items[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(items.size()) - 1))];
}

// Value kinds the generators know how to produce and combine. `other` is a
// result (arrays, jsonb, inexact floats) that later transforms do not read.
enum class Kind { int4, int8, numeric, text, boolean, float8, other };

const char* sql_type(Kind kind);

struct Column {
  std::string name;
  Kind kind = Kind::int4;
  bool tiny = false;  // values from a tiny domain (a good group key)
  bool not_null = false;
};

struct Table {
  std::string name;
  std::vector<Column> key;      // primary key columns (id int [, tag text])
  std::vector<Column> columns;  // the other columns
  std::vector<std::vector<std::string>> indexes;
  // A NOT NULL column under a unique index besides the primary key ("" for
  // none): a join ON it is to-one. Writes that collide on it fail, as any
  // application's would.
  std::string unique_column;
  int key_space = 40;  // ids are drawn mostly from 1..key_space
  // Hash partitions on id (0: a plain table). Only for a table without a
  // unique column: a unique index of a partitioned table must hold its
  // partition key.
  int partitions = 0;
  std::string partition(int i) const { return name + "_p" + std::to_string(i); }
};

struct Schema {
  std::vector<Table> tables;
  std::string ddl() const;  // CREATE TABLE + CREATE INDEX statements
};

Schema random_schema(Rng& rng);

// A SQL literal (or constant expression) of `kind`; NULL only when nullable.
std::string random_value(Rng& rng, Kind kind, bool tiny, bool nullable);
// A literal for a primary-key column.
std::string random_key_value(Rng& rng, const Table& table, const Column& key);
// A VALUES tuple for a whole row of `table`, key first.
std::string random_row(Rng& rng, const Table& table);
// The rows a table starts with (VALUES tuples), and the INSERT statement
// that writes them ("" for none).
std::vector<std::string> initial_rows(Rng& rng, const Table& table);
std::string insert_rows(const Table& table, const std::vector<std::string>& rows);

}  // namespace trellis::gen
