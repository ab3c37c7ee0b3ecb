// The resolved form of a transform, as validation produces it and the catalog
// stores it (transforms.definition, jsonb). The compiler renders every SQL
// statement for the transform from this alone.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "catalog/states.hpp"

namespace trellis::catalog {

// A typed column: a key column, a column a definition reads, or a field.
struct Column {
  std::string name;
  std::string type;        // format_type() text, e.g. "numeric(12,2)"
  std::string collation;   // "" for the type's default
  bool comparable = true;  // has a default btree equality; otherwise compared as text
};

// An aggregate call inside an aggregate field that is not recomputed over
// the group's ledger rows: invertible ones are read from running state on
// the target (docs/architecture.md, data path step 8); MIN/MAX of a column from an index on the
// ledger.
struct IncrementalCall {
  size_t begin = 0;  // byte range of the call in Field::sql
  size_t end = 0;
  std::string kind;     // count_star | count | sum | avg | min | max
  int accumulator = 0;  // 1-based index into TransformDef::accumulators (count, sum, avg)
  std::string column;   // min/max: the ledger column, read through a (group, column) index
};

struct Field {
  std::string name;
  std::string sql;  // canonical expression SQL
  Column column;    // result type
  // Aggregate fields whose every aggregate call is invertible are computed
  // from running state (`calls` replaced); the rest are recomputed from the
  // ledger for each touched group.
  bool incremental = false;
  std::vector<IncrementalCall> calls;
};

// Running state kept on an aggregate target for one distinct argument of
// COUNT/SUM/AVG: its non-null count and, when summed, its sum (and, for
// numeric arguments, how many of the values are NaN).
struct Accumulator {
  std::string arg_sql;   // canonical argument SQL over the source alias
  std::string arg_type;  // smallint/integer/bigint, numeric(p,s), or any type when only counted
  bool summed = false;
  bool numeric() const { return arg_type.rfind("numeric", 0) == 0; }
};

// How a GROUP BY item that is an expression (or a renamed column) is
// computed from a source row: its canonical SQL over the source alias, and
// the index key PostgreSQL renders for it (pg_get_indexdef), which a
// source index must lead with.
struct GroupExpr {
  std::string sql;        // "" for a plain source column of the group column's name
  std::string index_key;  // "" for a plain column
  // The alias of the joined table whose plain column this item is ("" when
  // the item reads the source): such an item is evaluated like an
  // expression (its SQL the qualified column) and keys no source index.
  std::string joined_alias;
};

// One table joined to the source (docs/architecture.md, data path step 9):
// to-one, its ON covering the joined table's primary key, so every target
// row keeps the source's key. A change to the joined table is captured by
// that key, which the ON equates with columns of the tables before it: the
// drain finds the source rows a change reaches through those columns.
struct JoinDef {
  struct Equality {
    std::string column;        // of the joined table
    std::string other_alias;   // the source's alias or an earlier join's
    std::string other_column;  // of that table
  };
  bool left_outer = false;
  std::string schema;
  std::string table;
  std::string alias;
  int table_id = 0;           // the captured table (ring tbl) of `table`
  std::vector<Column> key;    // its primary key, the captured key
  std::vector<Column> reads;  // its columns the definition reads (key included)
  std::vector<Equality> on;   // in the order written
  // The ON does not cover the joined table's primary key: a source row may
  // match several of its rows, and the target holds one row per match,
  // keyed by the source key plus this table's key (`fan_key`).
  bool fans = false;
  // A 1-1 transform's join whose ON covers a unique key of the joined table
  // other than its primary key: to-one (the target keeps the source's key),
  // but a change of the table, captured by its primary key, cannot reach
  // the rows its old row matched through the ON, so the target holds the
  // matched row's key (`held_key`) and a change finds them through it.
  bool held = false;
  std::string name() const { return schema + "." + table; }
};

// The target column holding column `c` of fanning join `j`'s key:
// `<alias>_<column>`.
std::string fan_column_name(const JoinDef& j, const Column& c);
// The ledger column holding column `c` of fanning join `j`'s key in an
// aggregate: `__key.<alias>.<column>` ("__" names are reserved, so it
// never meets a source or group column the ledger holds).
std::string ledger_fan_column_name(const JoinDef& j, const Column& c);

// How a definition's FROM clause is written, in the statement language and
// in SQL alike: `a.col = o.col AND ...` over the equalities `on` of join `j`,
// and ` [LEFT ]JOIN schema.table AS a ON <that>` (`left_outer` may differ from
// j's own, for statements that follow only the matching rows).
std::string on_condition(const JoinDef& j, const std::vector<JoinDef::Equality>& on);
std::string join_item(const JoinDef& j, bool left_outer);

struct TransformDef {
  int id = 0;
  int version = 1;
  Status status = Status::waiting_to_backfill;
  std::string target_schema;
  std::string target_table;
  std::string source_schema;
  std::string source_table;
  std::string alias;  // the name expressions qualify the source with
  int source_table_id = 0;
  std::vector<Column> key;    // source key columns (the target key's leading columns)
  std::vector<Column> reads;  // source columns read (key included)
  std::vector<Field> fields;
  std::optional<std::string> where_sql;
  std::vector<JoinDef> joins;  // in FROM order
  Shape shape = Shape::one_to_one;
  // Aggregates: the GROUP BY columns (target columns of the same names) and
  // the other source columns the fields read, copied into the ledger.
  std::vector<Column> group;
  std::vector<GroupExpr> group_exprs;  // parallel to `group`; may be shorter (plain columns)
  std::vector<Column> ledger;
  std::vector<Accumulator> accumulators;
  // How an aggregate's group is encoded in its hidden "__group" (target) and
  // "__ledger_group" (ledger) columns: one text (COLLATE "C") holding the
  // JSON array of the group's values, which the group indexes compare as
  // bytes; targets defined by earlier versions keep a text[] of each value's
  // JSON text (compare_group_text false), compared element by element.
  bool compare_group_text = false;
  bool without_source_index = false;
  // A 1-1 over an aggregate target (or over a 1-1 that has one): the
  // fields carrying the upstream's group columns, which identify the rows
  // to the user. The target holds them under UNIQUE NULLS NOT DISTINCT;
  // its row key stays the upstream's hidden "__group" (group values may be
  // NULL), whose value determines theirs (docs/architecture.md, "Keys of
  // derived sources").
  std::vector<std::string> identity;
  // The LEFT JOINs (aliases) that fan out or are held under which the WHERE
  // reads a column (of the join or of a join hanging off it): the WHERE can
  // reject a match of one and pass the row without a match, so the matches
  // it rejects are kept beside the target (rejected_table(); compile
  // rejected_matches.hpp), where a change of a matched row finds them.
  std::vector<std::string> rejecting_joins;
  std::string statement;
  // TRANSFORM ... ADOPT EXISTING TABLE: the target existed before the
  // definition and outlives it (DROP TRANSFORM leaves it in place), and
  // `adopted_columns` are the hidden columns ADOPT added to it, which DROP
  // removes (catalog column adopted_columns, NULL for a created target).
  bool adopted = false;
  std::vector<std::string> adopted_columns;
  // Runtime, not definition: the target is itself captured (another
  // transform reads it), so writing it stages changes downstream.
  bool feeds_downstream = false;
  // Runtime, not definition: fields of a 1-1 target frozen by PAUSE
  // TRANSFORM t.col (drains and builds leave them as they are).
  std::vector<std::string> paused_columns;
  bool paused(const std::string& field) const;
  // The field is one of `identity`.
  bool identifies(const std::string& field) const;
  // Runtime, not definition: the build writes the target by key ranges
  // (phase ranges; an aggregate's groups: group_ranges), so drains park the keys they read instead
  // of re-deriving them (catalog parked_keys).
  bool parks_changes = false;

  std::string target_name() const { return target_schema + "." + target_table; }
  std::string source_name() const { return source_schema + "." + source_table; }
  // `schema.source AS alias`, and the same followed by every join: the FROM
  // clause every statement computing target rows reads.
  std::string source_item() const;
  std::string from_clause() const;
  std::string ledger_table() const { return target_table + "__ledger"; }
  std::string rejected_table() const { return target_table + "__reject"; }
  // The GROUP BY item of group column i is an expression (group_exprs[i]).
  bool group_is_expression(size_t i) const;
  // Whether some group item is a joined table's column (no source index
  // can lead with it).
  bool group_reads_join() const;
  // An aggregate without GROUP BY: one target row, kept when no source row
  // contributes (its fields are then the aggregates of no rows).
  bool single_group() const { return shape == Shape::aggregate && group.empty(); }
  // The captured tables the definition reads: the source's, then each
  // joined table's (a table read twice appears once).
  std::vector<int> table_ids() const;
  bool reads_table(int table_id) const;
  // The columns it reads of captured table `table_id` (union over the
  // aliases it is read under).
  std::vector<Column> reads_of(int table_id) const;
  bool any_incremental() const;
  bool any_recomputed() const;
  // Some join fans out (JoinDef::fans); how many do.
  bool fans_out() const;
  size_t fanning_joins() const;
  // The captured tables of the joins that fan out.
  std::set<int> fanning_table_ids() const;
  // The target key's columns after the source key: each fanning join's key,
  // named by fan_column_name, in FROM order. NULL in a row a LEFT JOIN
  // found no match for.
  struct FanColumn {
    Column column;      // named as in the target
    std::string alias;  // the join
    std::string joined_column;
    bool nullable = false;  // the join is a LEFT JOIN
  };
  std::vector<FanColumn> fan_key() const;
  // The same named as an aggregate's ledger holds them
  // (ledger_fan_column_name): the ledger's key is `key`, then these.
  std::vector<FanColumn> ledger_fan_key() const;
  // The target's key: `key`, then fan_key()'s columns.
  std::vector<Column> target_key() const;
  // The key of each held join's matched row (JoinDef::held), as the target
  // holds it: named by ledger_fan_column_name, NULL without a match.
  std::vector<FanColumn> held_key() const;
};

// A table whose changes are captured into the ring.
struct CapturedTable {
  int id = 0;
  std::string schema;
  std::string name;
  std::vector<Column> key;
  std::optional<std::string> installed_signature;
  std::optional<std::string> installed_digest;  // of the trigger functions' bodies
  unsigned relid = 0;                           // the table's oid when capture was installed
  // Non-zero when this describes a partition under the partitioned table
  // `id` names (schema and name are then the partition's): the oid of that
  // partition, whose capture stages the root's id and whose functions are
  // its own (compile/capture).
  unsigned node = 0;
};

nlohmann::json to_json(const TransformDef& def);
TransformDef transform_from_json(const nlohmann::json& j);
nlohmann::json columns_to_json(const std::vector<Column>& cols);
std::vector<Column> columns_from_json(const nlohmann::json& j);

}  // namespace trellis::catalog
