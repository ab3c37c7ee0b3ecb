// Join SQL; see join_sql.hpp.
#include "compile/join_sql.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/sql_text.hpp"
#include "compile/key_codec.hpp"
#include "compile/rejected_matches.hpp"
#include "compile/shared_sql.hpp"
#include "compile/transform_sql.hpp"

namespace trellis::compile {

using base::ident;
using base::qualified;
using catalog::join_item;
using catalog::JoinDef;
using catalog::on_condition;
using catalog::TransformDef;

namespace {

// The joins (indexes below `upto`) that join `j` reads through, transitively.
std::set<size_t> ancestors(const TransformDef& d, size_t upto) {
  std::set<size_t> out;
  std::vector<size_t> todo{upto};
  while (!todo.empty()) {
    size_t at = todo.back();
    todo.pop_back();
    for (const auto& e : d.joins[at].on)
      for (size_t k = 0; k < at; ++k)
        if (d.joins[k].alias == e.other_alias && out.insert(k).second) todo.push_back(k);
  }
  return out;
}

}  // namespace

namespace {

// The page's keys of join j's table, decoded as its key columns.
std::string page_keys_of(const JoinDef& j) {
  return fmt::format("(SELECT {} FROM {} p WHERE p.tbl = {})", decode_key_columns(j.key, "p.key"),
                     kPageTable, j.table_id);
}

// Adds the source keys `rows` selects (column `key`, encoded, distinct) to
// the page, as keys d re-derives whole. Only a transform over a join that
// fans out tells whole keys from paired ones (kWholeRootsTable); every other
// one re-derives all of the page's keys, so nothing is recorded for it.
std::string add_to_page(const TransformDef& d, const std::string& rows) {
  std::string root = std::to_string(d.source_table_id);
  bool record = d.fans_out();
  return fmt::format(
      "WITH __reached AS MATERIALIZED ({0}){1} INSERT INTO {2} (tbl, key, mapped) SELECT {3}, "
      "__e.key, true FROM __reached __e WHERE {4}",
      rows,
      record
          ? fmt::format(", __whole AS (INSERT INTO {} (tid, root) SELECT {}, key FROM __reached)",
                        kWholeRootsTable, d.id)
          : "",
      kPageTable, root, page_lacks(root, "__e.key"));
}

// A to-one join: the page's keys are the joined rows' ON values, joined to
// the tables before it, as above.
JoinedKeyMap map_to_one(const TransformDef& d, size_t i) {
  const JoinDef& j = d.joins[i];
  std::string from = d.source_item();
  for (size_t k : ancestors(d, i)) from += join_item(d.joins[k], false);
  std::vector<JoinDef::Equality> by_key;
  for (const auto& e : j.on)
    if (std::any_of(j.key.begin(), j.key.end(),
                    [&](const catalog::Column& c) { return c.name == e.column; }))
      by_key.push_back(e);
  from += fmt::format(" JOIN (SELECT {} FROM {} p WHERE p.tbl = {}) AS {} ON {}",
                      decode_key_columns(j.key, "p.key"), kPageTable, j.table_id, ident(j.alias),
                      on_condition(j, by_key));
  return {j.table_id, add_to_page(d, fmt::format("SELECT DISTINCT {} AS key FROM {}",
                                                 encode_key(d.key, ident(d.alias)), from))};
}

// A join that fans out (or a held one, JoinDef::held, mapped the same way
// to whole source keys): its key is not what its ON equates, so the walk
// cannot start from the staged key alone. A changed row reaches the source
// rows the target holds it for (its row before the change: the target's
// fan key columns, or the ledger's, and the matches the WHERE rejected:
// HeldRows) and the source rows its current row matches (the live table,
// from its key, to the tables before it). The target read misses
// no row a re-derive from before the change wrote: the change's segment is
// promoted only once every transaction older than its fence has ended, and
// every writer of target rows takes its xid (a page or claim write) before
// the snapshot it reads the tables in (docs/architecture.md, joins that
// fan out).
JoinedKeyMap map_fanning(const TransformDef& d, size_t i, const std::vector<HeldRows>& held_rows,
                         bool pairs = true) {
  const JoinDef& j = d.joins[i];
  std::string from = d.source_item();
  for (size_t k : ancestors(d, i)) from += join_item(d.joins[k], false);
  from += join_item(j, false);
  // The held rows are probed once per changed key (its index, fan_indexes;
  // OFFSET 0 keeps the probe from being flattened into a join): the
  // statistics of a target a build is filling lag, and a hash join planned
  // from them scanned the whole target on every page. Each table's probe
  // names j's key columns as the first table does.
  std::vector<catalog::Column> held;
  std::vector<std::string> probes;
  for (const auto& rows : held_rows) {
    std::vector<catalog::Column> cols;
    for (const auto& f : rows.fan)
      if (f.alias == j.alias) cols.push_back(f.column);
    if (held.empty()) held = cols;
    std::string select = base::join<catalog::Column>(
        d.key, ", ", [](const catalog::Column& c) { return "__r." + ident(c.name); });
    std::string is_changed;
    for (size_t k = 0; k < cols.size(); ++k) {
      select += fmt::format(", __r.{} AS {}", ident(cols[k].name), ident(held[k].name));
      is_changed += fmt::format("{}__r.{} = __c.{}", k ? " AND " : "", ident(cols[k].name),
                                ident(j.key[k].name));
    }
    probes.push_back(
        fmt::format("(SELECT {} FROM {} __r WHERE {} OFFSET 0)", select, rows.table, is_changed));
  }
  std::string rows = fmt::format(
      "SELECT {} AS key, {} AS fan FROM (SELECT DISTINCT {} FROM {} p WHERE p.tbl = {}) __c CROSS "
      "JOIN LATERAL ({}) __t UNION SELECT {}, {} FROM {} WHERE {} IN {}",
      encode_key(d.key, "__t"), encode_key(held, "__t"), decode_key_columns(j.key, "p.key"),
      kPageTable, j.table_id,
      base::join<std::string>(probes, " UNION ALL ", [](const std::string& p) { return p; }),
      encode_key(d.key, ident(d.alias)), encode_key(j.key, ident(j.alias)), from,
      key_tuple(j.key, ident(j.alias)), page_keys_of(j));
  // A held join (JoinDef::held) is to-one: its source keys are whole.
  if (!pairs) return {j.table_id, add_to_page(d, "SELECT DISTINCT key FROM (" + rows + ") __r")};
  std::string root = std::to_string(d.source_table_id);
  return {
      j.table_id,
      fmt::format("WITH __pairs AS MATERIALIZED ({0}), __kept AS (INSERT INTO {1} (tid, jidx, "
                  "root, fan) SELECT {2}, {3}, key, fan FROM __pairs) INSERT INTO {4} (tbl, "
                  "key, mapped) SELECT {5}, __e.key, true FROM (SELECT DISTINCT key FROM "
                  "__pairs) __e WHERE {6}",
                  rows, kFanPairsTable, d.id, i, kPageTable, root, page_lacks(root, "__e.key"))};
}

}  // namespace

std::vector<JoinedKeyMap> map_joined_keys(const TransformDef& d, const HeldRows& held) {
  std::vector<HeldRows> held_rows = {held};
  if (auto rejected = rejected_matches(d)) held_rows.push_back(rejected_held_rows(*rejected));
  std::vector<JoinedKeyMap> out;
  for (size_t i = 0; i < d.joins.size(); ++i)
    if (d.joins[i].held)
      out.push_back(map_fanning(d, i, held_rows, false));
    else if (!d.joins[i].fans)
      out.push_back(map_to_one(d, i));
  for (size_t i = 0; i < d.joins.size(); ++i)
    if (d.joins[i].fans) out.push_back(map_fanning(d, i, held_rows));
  return out;
}

}  // namespace trellis::compile
