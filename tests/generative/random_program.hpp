// Random valid transform definitions over a random schema: 1-1 transforms
// (expressions, WHERE; INNER and LEFT joins of one or two tables, to-one
// or fanning out, star, snowflake and self joins), GROUP BY transforms
// (the same joins; every kind of
// aggregate the kinds allow, expressions over aggregates, FILTER, ordered
// aggregates, WITH and WITHOUT a source index, none at all: a SELECT
// DISTINCT) and chains of them over other targets.
// Expressions never overflow on the schema's extreme values, so the plain
// SELECT (the oracle) never errors, and float aggregates only see exact
// binary fractions, so their sums do not depend on the row order.
#pragma once

#include <string>
#include <vector>

#include "generative/random_schema.hpp"

namespace trellis::gen {

// Something a transform reads: a source table or another transform's target.
struct Relation {
  std::string name;
  std::vector<Column> columns;          // readable columns (keys included)
  std::vector<std::string> order_keys;  // a total order of its rows ("" list: none)
  std::vector<std::string> key;         // its key columns (none for an aggregate target)
};

struct Transform {
  std::string name;
  std::string source;
  int upstream = -1;  // index of the transform whose target it reads, -1 for a table
  std::string alias;  // the source's alias when the statement joins tables ("" otherwise)
  std::vector<std::string> joined;  // the tables it joins to its source
  int level = 0;                    // 0 over a table, upstream level + 1 otherwise
  bool aggregate = false;
  std::string prepare;    // SQL run before the define (an index on an upstream target)
  std::string statement;  // the TRANSFORM statement
  Relation target;        // what a transform downstream can read
};

struct Program {
  std::vector<Transform> transforms;
  // Every root transform reads one table, most of them aggregates over its
  // few hot groups, and the plan defines more of them under writes: the
  // shape where capture is widened while a build starts and where several
  // recomputed aggregates re-read the same groups.
  bool hot = false;
  std::string describe() const;
};

// Features that hit known, still-open bugs are left out of the programs
// unless TRELLIS_GEN_KNOWN_BUGS names them (comma-separated, or "all"; see
// docs/testing.md). None is open at present; a newly found one is added
// here with its name, guarded by this call where the generator produces it.
bool known_bug_included(const std::string& name);
// The TRELLIS_GEN_KNOWN_BUGS setting ("" when none), for replay lines.
std::string known_bugs_setting();

// Adds the source indexes its GROUP BY transforms need to `schema`. `hot`:
// see Program::hot (a program that is not hot draws exactly as before).
Program random_program(Rng& rng, Schema& schema, bool hot);

}  // namespace trellis::gen
