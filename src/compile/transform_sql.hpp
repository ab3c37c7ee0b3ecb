// The statements every transform shape provides to the drain, the build and
// define: DDL for its tables, the re-derive steps for the keys gathered in the
// page table (the first step only locks: invariant I1), build chunk paging
// and the oracle query. compile_transform() picks the shape's compiler.
#pragma once

#include <string>
#include <vector>

#include "catalog/definition.hpp"
#include "compile/join_sql.hpp"

namespace trellis::compile {

// Per-connection temporary tables: the page's keys and, for aggregates, the
// groups a page touched.
inline constexpr const char* kPageTable = "pg_temp.trellis_page";
inline constexpr const char* kGroupsTable = "pg_temp.trellis_groups";
// At most this many groups, a state-only aggregate's build folds its ledger
// into the groups by heap blocks (TransformSql::fold_range_insert).
inline constexpr int kFoldMaxGroups = 1000;
// A group_ranges phase whose ledger holds at most this many ranges' worth
// of entries (build_range_rows each: 10M at the default) splits it into a
// part per drain thread by a sample of its groups (group_split_bound):
// each part one GROUP BY over the ledger's heap, which reads no group index
// and computes no bound from one (half a second of work or so at 1M
// entries, a few seconds at 10M, where creating the group index alone
// took 10-19 s); a thread that finds every part claimed creates the
// ledger's indexes meanwhile (docs/architecture.md, "Building by ranges",
// step 3).
inline constexpr int kSplitLedgerMaxRanges = 200;
// The same for a ledger whose drain reads it by group (a definition with a
// field recomputed from the ledger: LedgerIndexes::drain_reads_groups),
// whose group index is created anyway: 1M entries at the default.
inline constexpr int kSplitIndexedLedgerMaxRanges = 20;
// Set in a part's transaction: the memory its hash aggregate may use
// before it spills (twice work_mem; 100,000 groups of a COUNT and a SUM
// with their hidden state take ~66 MB).
inline constexpr const char* kLedgerPartMemory = "SET LOCAL work_mem = '64MB'";
// Ledger entries a fold range counts per heap block (ledger rows are
// narrow: ~100 to a page), to size a range of `build_range_rows` entries.
inline constexpr int kFoldEntriesPerBlock = 100;
// Entries whose groups group_fold_sample counts.
inline constexpr int kFoldSampleEntries = 30000;
// Entries whose groups group_split_bound splits: parts need only be about
// equal (~5 ms here, where 30,000 entries took ~50 ms at every claim).
inline constexpr int kSplitSampleEntries = 5000;
// Which page keys a transform re-derives whole (join_sql.hpp, "pairs"): a
// key put in the page directly (`mapped` NULL: a source row's change, a
// build chunk, a released or parked key) is whole for every transform; a
// key a transform's to-one join mapping (or an aggregate's) reached is whole
// for it (kWholeRootsTable: tid, root); a transform over a join that fans
// out re-derives, of a key only its fanning joins reached, the target rows
// or ledger entries of the (source key, fanning key) pairs they recorded
// (kFanPairsTable). A mapped
// key no mapping of a transform reached is not re-derived by it at all.
inline constexpr const char* kFanPairsTable = "pg_temp.trellis_fan_pairs";
inline constexpr const char* kWholeRootsTable = "pg_temp.trellis_whole_roots";
std::vector<std::string> create_temp_tables_sql();

struct TransformSql {
  std::vector<std::string> create;  // target (and side tables) DDL
  std::vector<std::string> drop;    // drops them
  // Of `create` and `drop`, those of the side tables only (an aggregate's
  // ledger, the rejected matches): an adopted target (ADOPT EXISTING TABLE)
  // exists before its definition and outlives it.
  std::vector<std::string> side_create;
  std::vector<std::string> side_drop;
  // Re-derive of the page's keys for this transform, in order. Step 0 takes
  // the locks of the page's key slots (lock_key_slots) and reads no source
  // row; later steps read in later statements. Step kHeldRowsStep writes
  // the rows a joined table's change is traced through (the target, or the
  // ledger) and, in the same statement, the matches the WHERE rejects
  // (rejected_matches.hpp).
  static constexpr size_t kHeldRowsStep = 1;
  std::vector<std::string> steps;
  // A drain's first statements for a page holding keys of a joined table
  // (the table id): the source keys they reach join the page.
  std::vector<JoinedKeyMap> map_joined_keys;
  // Adds every source key the transform holds to the page (after a TRUNCATE).
  std::string page_all_held_keys;
  // Whether a page row `p` (its encoded source key p.key) lies beyond the
  // frontier cursor `__f.cursor` of the source ranges (NULL: no range is
  // handed out yet), so that a range claimed later reads the row's change
  // (catalog Lifecycle::park_statement). Empty over a join that fans out,
  // whose page rows also hold joined tables' keys: every key is parked.
  std::string page_key_beyond_frontier;
  // The table (or a subquery) of the rows that hold the transform's source
  // keys, under the source key's column names: its target, or its ledger.
  std::string held_keys_from;
  // Adds every key of the source to the page: after a TRUNCATE of a joined
  // table, rows the target lacks may come in (a LEFT JOIN whose WHERE reads
  // the joined side: `WHERE b.id IS NULL`).
  std::string page_all_source_keys;
  // Build: $1 = cursor (text[] or NULL), $2 = chunk size; returns the chunk's
  // last key, or no row when fewer than $2 keys remain. "Sweep" pages over
  // the keys the transform holds (after RESUME), "source" over the source.
  std::string source_chunk_bound;
  std::string sweep_chunk_bound;
  // Build: fill the page with keys in ($1, $2] ($1/$2 may be NULL for open ends).
  std::string page_source_range;
  std::string page_sweep_range;
  // The steps a build chunk runs. Aggregates only rewrite the ledger: their
  // build ends with a "groups" phase that recomputes each group once, in
  // chunks of groups, instead of once per source chunk.
  std::vector<std::string> build_steps;
  // The groups phase (aggregates only; empty otherwise): $1 = cursor, $2 =
  // chunk size -> the chunk's last group; fill the touched-groups table with
  // the groups in ($1, $2]; then run group_steps (lock the groups, set their
  // fields and state from the ledger).
  std::string group_chunk_bound;
  std::string page_group_range;
  std::vector<std::string> group_steps;
  // Build by key ranges: $1, $2 bound the range (cursor, upper] of source
  // keys (NULL: an open end). range_insert writes the range's rows (an
  // aggregate's: ledger entries) into a table that holds none of them (a
  // fresh build); range_rewrite upserts the rows that differ and deletes the
  // rows in the range whose source rows are gone or filtered out, returning
  // the source rows it read. Neither reads or writes the page.
  std::string range_insert;
  std::string range_rewrite;
  // An aggregate's groups by group-key ranges of the ledger (empty for
  // 1-1): group_range_bound, $1 = cursor (an encoded group or NULL), $2 =
  // ledger entries per range -> the range's last group, or no row for the
  // last range; group_range_insert writes the groups in ($1, $2] (NULL: an
  // open end), each computed once by one GROUP BY over that index range of
  // the ledger, into a target that holds none of them; group_range_rewrite
  // upserts the groups that differ and deletes the range's groups the ledger
  // no longer holds, returning the number of groups it computed.
  std::string group_range_bound;
  std::string group_range_insert;
  std::string group_range_rewrite;
  // A ledger of at most kSplitLedgerMaxRanges ranges' worth of entries is
  // split into parts without reading an index: group_split_bound, $1 =
  // cursor (an encoded group or NULL), $2 = parts -> the smallest of the
  // $2-quantiles of a repeatable sample of the ledger's groups above $1, or
  // NULL for the last part (the whole ledger when $2 is 1). Each part is a
  // group range of group_range_insert / group_range_rewrite over the heap.
  std::string group_split_bound;
  // A definition whose every field comes from the running state (COUNT,
  // SUM, AVG) may fold the ledger into its groups by block ranges of the
  // ledger's heap instead, when it has few groups (empty otherwise; see
  // docs/architecture.md, "Building by ranges", step 3). group_fold_check:
  // one row, true when the target is empty (the builder then asks
  // group_chunk_bound for the (kFoldMaxGroups + 1)-th group: none, it folds). fold_range_bound, $1
  // = cursor (NULL or {ctid,BLOCK}), $2 = ledger entries per range -> {ctid,BLOCK} of the range's
  // end, NULL for the last range. fold_range_insert adds the present entries of blocks [$1, $2)
  // (NULL: an open end) to their groups' state, inserting the groups the target lacks, in group
  // order.
  std::string group_fold_check;
  // While the ledger has no group index (a fresh build): one row, the
  // number of groups in a sample of its heap blocks, for the same choice.
  std::string group_fold_sample;
  std::string fold_range_bound;
  std::string fold_range_insert;
  // An aggregate's ledger is created without its indexes (all empty for
  // 1-1): a fresh build fills the bare heap by ranges; the builder creates
  // group_indexes when the group ranges start (unless they fold), and one
  // thread each creates what is missing of the group indexes (when the
  // drain reads them) and of the key beside the group ranges (claim_group_indexes /
  // claim_key_index: a transaction's advisory try-lock, true for one thread), or any path that
  // needs them creates them first under `lock` (SHARE ROW EXCLUSIVE: it waits for an index being
  // created, then asks again). key_missing / group_indexes_missing: one row, true while the ledger
  // lacks its key / its group index. A state-only definition's drain never
  // reads the ledger by group (drain_reads_groups false): its group index is
  // created only where a build reads by group (group ranges over many
  // entries, keyset chunks of a group phase), so its drains and fresh
  // builds do not maintain one. drain_missing: true while the ledger lacks
  // an index its drain reads (the key, and the group indexes when
  // drain_reads_groups).
  struct LedgerIndexes {
    std::vector<std::string> group_indexes;
    std::string key_index;
    std::string key_missing;
    std::string group_indexes_missing;
    bool drain_reads_groups = true;
    std::string drain_missing;
    std::string lock;
    std::string claim_group_indexes;
    std::string claim_key_index;
  } ledger;
  // ANALYZE of the tables it writes (the target; the ledger; the rejected
  // matches), run once a build has made it live: the drains' statements
  // that probe them per key are planned from real statistics.
  std::vector<std::string> analyze;
  // The definition as a plain SELECT, for the oracle.
  std::string oracle_select;
};

TransformSql compile_transform(const catalog::TransformDef& def);

}  // namespace trellis::compile
