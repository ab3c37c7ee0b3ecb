// SQL fragments the transform shapes share: column DDL, the page's keys,
// keyset paging for builds, and change detection between rows.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "catalog/definition.hpp"

namespace trellis::compile {

// "name" type [COLLATE c] [NOT NULL]
std::string column_ddl(const catalog::Column& c, bool not_null);
// ALTER TABLE schema.table ALTER COLUMN c TYPE t [COLLATE x], ... giving each
// column the type (and collation) in `columns`.
std::string alter_column_types(const std::string& schema, const std::string& table,
                               const std::vector<catalog::Column>& columns);
// SELECT <decoded key columns> FROM the page WHERE tbl = <source table id>
std::string page_keys_cte(const catalog::TransformDef& d);
// __t.f IS DISTINCT FROM <source>.f (the derived row), through text when
// the type has no equality or equal values print differently; changed()
// compares with __s.
std::string changed_from(const catalog::Field& f, const std::string& source);
std::string changed(const catalog::Field& f);
// Tables keyed by a source key and the keys of the joins that fan out
// (a 1-1 target, an aggregate's ledger): `key` then the fan columns `fan`.
std::vector<catalog::Column> fanned_key(const std::vector<catalog::Column>& key,
                                        const std::vector<catalog::TransformDef::FanColumn>& fan);
// Whether a fan key may hold NULLs (its uniqueness is then NULLS NOT DISTINCT).
bool any_nullable(const std::vector<catalog::TransformDef::FanColumn>& fan);
// Their key constraint: a PRIMARY KEY, or, when a LEFT JOIN that fans out
// leaves its columns NULL for a row without a match, a UNIQUE constraint
// under which NULLs are equal (NULLS NOT DISTINCT).
std::string fanned_key_constraint(const std::vector<catalog::Column>& key,
                                  const std::vector<catalog::TransformDef::FanColumn>& fan);
// One index of `table` per join that fans out, on its columns of `fan`: a
// change of that table finds the rows that hold its old row (join_sql.hpp).
std::vector<std::string> fan_indexes(const std::string& table,
                                     const std::vector<catalog::TransformDef::FanColumn>& fan);
// Equality of the rows `a` and `b` by that key, in a form a hash join can
// use: the source key and an INNER fanning join's key by `=`; a LEFT one's,
// NULL in a row without a match, as one-element arrays, whose `=` holds for
// two NULLs (IS NOT DISTINCT FROM cannot be hashed, and an anti join by it
// over the 10,000 rows of one source key is quadratic).
std::string fanned_key_equal(const std::vector<catalog::Column>& key,
                             const std::vector<catalog::TransformDef::FanColumn>& fan,
                             const std::string& a, const std::string& b);
// Over a join that fans out (docs/architecture.md, fan-out pairs): whether
// the page row `p` of the source is a key d re-derives whole (put in the
// page directly, or reached by one of d's other mappings); the page's whole
// source keys, decoded; and the pairs (source key, key of fanning join i),
// decoded as the key's columns then `fan`, of the page's other ("partial")
// source keys, or with `roots_only` those keys alone.
std::string whole_for(const catalog::TransformDef& d, const std::string& p);
std::string whole_roots(const catalog::TransformDef& d);
std::string join_pairs(const catalog::TransformDef& d, size_t i,
                       const std::vector<catalog::Column>& fan, bool roots_only);
// One part of a re-derive of the partial keys per join that fans out (and a
// second one, under a LEFT JOIN, for a partial key's row without a match):
// `drive` yields its pairs (or partial keys), read as `__p`; `live` matches
// them on the tables (d's FROM clause), `held` on a table keyed like
// fanned_key(d.key, held_fan) read as alias `held` (the 1-1 target, the
// ledger). per_pair() drives `rows` (which reads `__p`) once per pair: a
// temporary table has no statistics, and a hash join from an estimate
// would scan the whole join.
struct FannedPart {
  std::string drive;
  std::string live;
  std::string held;
};
std::vector<FannedPart> fanned_parts(const catalog::TransformDef& d,
                                     const std::vector<catalog::TransformDef::FanColumn>& held_fan,
                                     const std::string& held);
std::string per_pair(const std::string& drive, const std::string& rows);
// See TransformSql: the chunk's last key after $1 in `table`'s key order.
std::string chunk_bound(const std::vector<catalog::Column>& key, const std::string& table);
// The same over the rows of a FROM clause `from` whose key columns are
// read as `alias`.col (each key counted once per row it gives).
std::string chunk_bound_over(const std::vector<catalog::Column>& key, const std::string& from,
                             const std::string& alias);
// Fills the page with `table`'s keys in ($1, $2] that it lacks.
std::string page_range(const catalog::TransformDef& d, const std::string& table);
// Fills the page with every key `table` holds that it lacks.
std::string page_all_keys(const catalog::TransformDef& d, const std::string& table);
// True when the page holds no key `key_expr` of table `table_expr` (a table
// id, or a column holding one): the page has no unique index (see
// create_temp_tables_sql), so every writer that could add a key twice adds
// it only under this condition.
std::string page_lacks(const std::string& table_expr, const std::string& key_expr);
// Invariant I1 for the rows a transform keeps per source key (1-1 target
// rows, ledger entries): the first step of every re-derive takes, for each
// slot the page's keys of d's source table fall in, a transaction-scoped
// advisory lock of (d, slot), in slot order. A slot is the key's ring
// bucket, so drains of different buckets never wait for each other, and two
// writers of one key, whatever their kind (drain page, build chunk, field
// build, parked-key discharge, released key), never read and write it at once:
// the later one reads only after the earlier one committed. It writes no WAL
// and no row, where a row lock per key did both.
std::string lock_key_slots(const catalog::TransformDef& d);
// The key slot of page row `p` (its key's ring bucket), as lock_key_slots
// takes it; parked keys are stored with it.
std::string page_key_slot();
// The high half of every key slot lock's bigint key (pg_locks.classid).
inline constexpr int64_t kKeySlotLockTag = 0x54524C53;
// The base of transform `id`'s key slot locks (plus the slot).
inline int64_t key_slot_lock_base(int id) {
  return (kKeySlotLockTag << 32) + int64_t{id} * 256;
}
// The high half of the advisory locks by which one thread takes the build
// of an aggregate's ledger indexes beside the group ranges.
inline constexpr int64_t kLedgerIndexLockTag = 0x54524C49;
// The high half of the advisory try-locks by which one thread takes a slot
// of a transform over a join that fans out's parked keys to discharge
// (never waited on); other transforms' discharges try-lock the key slot
// locks themselves.
inline constexpr int64_t kParkedSlotClaimTag = 0x54524C50;
// The base of transform `id`'s parked-slot claim locks (plus the slot).
inline int64_t parked_slot_claim_base(int id) {
  return (kParkedSlotClaimTag << 32) + int64_t{id} * 256;
}
// Locks rows of `table` keyed by `cols` for the decoded page rows `rows_sql`
// (whose columns are the decoded key), inserting placeholders for absent ones
// in key order; existing rows are locked and left unwritten (ON CONFLICT DO
// UPDATE ... WHERE false). Used for an aggregate's group rows, which keys of
// every slot write.
std::string lock_rows(const std::string& table, const std::vector<catalog::Column>& cols,
                      const std::string& conflict_target, const std::string& rows_sql);

}  // namespace trellis::compile
