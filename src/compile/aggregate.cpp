// Aggregate re-derive; see aggregate.hpp. Targets carry a hidden "__group"
// (the encoded group key, its primary key: array equality treats NULL
// elements as equal, so NULL groups match by index) next to the declared
// identity UNIQUE NULLS NOT DISTINCT over the group columns. The ledger
// names its copy "__ledger_group", so a ledger keyed by an upstream
// aggregate target's "__group" does not clash. Incremental fields (see
// aggregate_state.hpp) are computed from running state the page folds each
// group's delta into; every other field is recomputed for each touched group
// from the ledger, with the user's own expression evaluated over the ledger
// under the source's alias, so results are exactly PostgreSQL's for any
// aggregate. A build's groups phase sets state and fields from the ledger.
#include "compile/aggregate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "base/sql_text.hpp"
#include "compile/aggregate_state.hpp"
#include "compile/join_sql.hpp"
#include "compile/key_codec.hpp"
#include "compile/shared_sql.hpp"

namespace trellis::compile {

using base::ident;
using base::join;
using base::literal;
using base::qualified;

using catalog::Column;
using catalog::Field;
using catalog::TransformDef;

namespace {

// Values that GROUP BY puts in one group must encode alike: numerics by
// value (1.0 and 1.00), floats with -0 folded into 0.
std::string canonical_group_value(const Column& c, const std::string& value) {
  if (c.type.rfind("numeric", 0) == 0) return "trim_scale(" + value + ")";
  if (c.type == "double precision" || c.type == "real") return "(" + value + " + 0)";
  return value;
}

// The definition's WHERE as a clause ("" without one).
std::string where_clause(const TransformDef& d) {
  return d.where_sql ? " WHERE (" + *d.where_sql + ")" : "";
}

}  // namespace

std::string group_value(const TransformDef& d, size_t i, const std::string& alias) {
  return d.group_is_expression(i) ? "(" + d.group_exprs[i].sql + ")"
                                  : alias + "." + ident(d.group[i].name);
}

// Whether a group whose member count is `count` is emptied (`is`) or
// kept (`!is`): an emptied group's row goes; a one-row aggregate's row
// never does.
std::string emptied(const TransformDef& d, const std::string& count, bool is = true) {
  if (d.single_group()) return is ? "false" : "true";
  return count + (is ? " = 0" : " <> 0");
}

namespace {
bool integer_type(const Column& c) {
  return c.type == "smallint" || c.type == "integer" || c.type == "bigint";
}

// Whether d's groups are encoded by concatenating integers (encode_group):
// then a group's encoding and its values determine each other, and an
// entry's stored group columns are the values the encoding was made from.
bool integer_group_encoding(const TransformDef& d) {
  return d.compare_group_text && !d.group.empty() &&
         std::all_of(d.group.begin(), d.group.end(), integer_type);
}
}  // namespace

// An integer's JSON text is its text output, so a group of integer columns
// is encoded by concatenation: byte for byte what json_build_array renders
// (elements separated by ", ", NULL as null; encodings written by either
// must match, as ledgers and targets outlive versions), without its
// per-row lookup of each argument's type.
std::string encode_group(const TransformDef& d, const std::string& alias) {
  std::vector<std::string> values;
  for (size_t i = 0; i < d.group.size(); ++i)
    values.push_back(canonical_group_value(d.group[i], group_value(d, i, alias)));
  if (integer_group_encoding(d))
    return "('[' || " +
           join<std::string>(
               values, " || ', ' || ",
               [](const std::string& v) { return "coalesce((" + v + ")::text, 'null')"; }) +
           " || ']')";
  if (d.compare_group_text)
    return fmt::format("json_build_array({})::text", fmt::join(values, ", "));
  return "ARRAY[" +
         join<std::string>(values, ", ",
                           [](const std::string& v) { return "to_jsonb(" + v + ")::text"; }) +
         "]";
}

namespace {

// The declared type of the encoded group.
std::string group_type(const TransformDef& d) {
  return d.compare_group_text ? "text COLLATE \"C\"" : "text[]";
}

// Build cursors (text[] in the catalog) as encoded groups and back: the
// text encoding travels as a one-element array.
std::string group_param(const TransformDef& d, const std::string& param) {
  return d.compare_group_text ? "(" + param + "::text[])[1]" : param + "::text[]";
}
std::string group_cursor(const TransformDef& d, const std::string& expr) {
  return d.compare_group_text ? "ARRAY[" + expr + "]" : expr;
}

// The touched-groups table (kGroupsTable) holds every encoding as text.
std::string to_groups_table(const TransformDef& d, const std::string& expr) {
  return d.compare_group_text ? expr : "(" + expr + ")::text";
}
std::string from_groups_table(const TransformDef& d, const std::string& column) {
  return d.compare_group_text ? column : "(" + column + ")::text[]";
}

// `, <value> AS <group column>, ...`: nothing for a one-row aggregate.
// Built-in scalars read back from their JSON text with a cast (what
// jsonb_to_record does for them, without a subquery per row);
// jsonb_to_record reads any other JSON value back into its type: arrays
// (JSON arrays), composites (JSON objects) and jsonb itself.
std::string decode_group(const TransformDef& d, const std::string& encoded) {
  std::string out;
  for (size_t i = 0; i < d.group.size(); ++i) {
    const Column& c = d.group[i];
    std::string value;
    if (json_text_reads_back_by_cast(c.type))
      value = d.compare_group_text
                  ? fmt::format("(({})::jsonb ->> {})::{}", encoded, i, c.type)
                  : fmt::format("(({})[{}]::jsonb #>> '{{}}')::{}", encoded, i + 1, c.type);
    else
      value = fmt::format(
          "(SELECT __v.x FROM jsonb_to_record(jsonb_build_object('x', {})) AS __v(x {}))",
          d.compare_group_text ? fmt::format("(({})::jsonb -> {})", encoded, i)
                               : fmt::format("({})[{}]::jsonb", encoded, i + 1),
          c.type);
    out += ", " + value + " AS " + ident(c.name);
  }
  return out;
}

// A joined table's column as the ledger holds it, "__<alias>.<column>"
// (no source column is named so: "__" is reserved), with the SQL that reads
// it over the definition's FROM clause.
struct JoinedLedgerColumn {
  Column stored;
  std::string read;
};
std::vector<JoinedLedgerColumn> joined_ledger_columns(const TransformDef& d) {
  std::vector<JoinedLedgerColumn> out;
  for (const auto& j : d.joins)
    for (const auto& c : j.reads) {
      Column stored = c;
      stored.name = "__" + j.alias + "." + c.name;
      out.push_back({stored, ident(j.alias) + "." + ident(c.name)});
    }
  return out;
}

// A row shaped like a ledger entry, named by the source's alias, seen
// under every joined table's alias too: `CROSS JOIN LATERAL (SELECT
// <alias>."__c.x" AS x, ...) AS c` per join, so the user's expressions
// read `c.x` over the ledger as they read it over the tables.
std::string joined_aliases(const TransformDef& d) {
  std::string out;
  for (const auto& j : d.joins) {
    std::string cols = join<Column>(j.reads, ", ", [&](const Column& c) {
      return ident(d.alias) + "." + ident("__" + j.alias + "." + c.name) + " AS " + ident(c.name);
    });
    out += fmt::format(" CROSS JOIN LATERAL (SELECT {}) AS {}", cols, ident(j.alias));
  }
  return out;
}

// The ledger's columns besides the key: the group columns (those that are
// not key columns too), the other source columns the fields read, and the
// joined tables' columns.
std::vector<Column> ledger_columns(const TransformDef& d) {
  std::vector<Column> cols;
  for (const auto& g : d.group) {
    bool in_key =
        std::any_of(d.key.begin(), d.key.end(), [&](const Column& k) { return k.name == g.name; });
    if (!in_key) cols.push_back(g);
  }
  cols.insert(cols.end(), d.ledger.begin(), d.ledger.end());
  for (const auto& j : joined_ledger_columns(d)) cols.push_back(j.stored);
  return cols;
}

// The ledger's key: the source key, then, over a join that fans out, each
// fanning table's key (one entry per match, as the join gives them).
std::vector<Column> ledger_key(const TransformDef& d) {
  return fanned_key(d.key, d.ledger_fan_key());
}
std::string ledger_key_equal(const TransformDef& d, const std::string& a, const std::string& b) {
  return fanned_key_equal(d.key, d.ledger_fan_key(), a, b);
}

std::string target(const TransformDef& d) {
  return qualified(d.target_schema, d.target_table);
}
std::string ledger(const TransformDef& d) {
  return qualified(d.target_schema, d.ledger_table());
}

std::vector<std::string> create(const TransformDef& d) {
  std::string cols;
  for (const auto& g : d.group) cols += column_ddl(g, false) + ", ";
  for (const auto& f : d.fields) cols += column_ddl(f.column, false) + ", ";
  cols += state_columns_ddl(d);
  std::string ledger_cols;
  for (const auto& k : d.key) ledger_cols += column_ddl(k, true) + ", ";
  for (const auto& f : d.ledger_fan_key()) ledger_cols += column_ddl(f.column, !f.nullable) + ", ";
  for (const auto& c : ledger_columns(d)) ledger_cols += column_ddl(c, false) + ", ";
  std::vector<std::string> out = {
      fmt::format("CREATE TABLE {} ({}\"__group\" {} NOT NULL PRIMARY KEY{})", target(d), cols,
                  group_type(d),
                  d.group.empty() ? "" : ", UNIQUE NULLS NOT DISTINCT " + key_tuple(d.group, "")),
      fmt::format("CREATE TABLE {} ({}\"__ledger_group\" {}, \"__present\" bool NOT NULL DEFAULT "
                  "false)",
                  ledger(d), ledger_cols, group_type(d))};
  // The drains map a fanning table's changed rows through these while a
  // build runs: they are not deferred (ledger_indexes).
  for (auto& index : fan_indexes(ledger(d), d.ledger_fan_key())) out.push_back(std::move(index));
  return out;
}

// The ledger's group index and MIN/MAX indexes, and its key. A define
// creates the ledger without them: a fresh build's ranges insert into the
// bare heap; the builder creates the group indexes when the group ranges
// start (unless they fold or take the whole ledger), and one thread each
// creates what the drain needs beside the group ranges, or any path that
// needs them creates them first (build/builder.cpp; docs/architecture.md,
// "Building by ranges"). A state-only definition's drain does not read by
// group, so only its builds' group ranges and chunks create its group
// index (TransformSql::LedgerIndexes::drain_reads_groups). The key is a
// unique index: CREATE INDEX takes a lock that the group ranges' reads do
// not wait for.
std::vector<std::string> ledger_group_indexes(const TransformDef& d) {
  std::vector<std::string> out = {
      fmt::format("CREATE INDEX ON {} (\"__ledger_group\")", ledger(d))};
  for (auto& index : extreme_indexes(d)) out.push_back(std::move(index));
  return out;
}

std::string ledger_key_index(const TransformDef& d) {
  return fmt::format("CREATE UNIQUE INDEX ON {} {}{}", ledger(d), key_tuple(ledger_key(d), ""),
                     any_nullable(d.ledger_fan_key()) ? " NULLS NOT DISTINCT" : "");
}

// The touched groups the rewrite records: old and new groups of the page's
// entries, each with its state delta (new contributions minus old) when
// `with_deltas` and some field is incremental.
std::string touched_groups(const TransformDef& d, bool with_deltas) {
  if (!with_deltas || !d.any_incremental())
    return fmt::format(
        "INSERT INTO {0} (tid, grp) SELECT {1}, {2} FROM __trellis_old WHERE \"__present\" UNION "
        "SELECT {1}, {2} FROM __trellis_src",
        kGroupsTable, d.id, to_groups_table(d, "\"__ledger_group\""));
  std::vector<std::string> contribs = contributions(d);
  std::string removed, added, sums, names;
  for (size_t i = 0; i < contribs.size(); ++i) {
    std::string name = "\"__d" + std::to_string(i + 1) + "\"";
    removed += ", -" + name;
    added += ", " + contribs[i];
    names += ", " + name;
    sums += (i ? ", " : "") + fmt::format("sum(__d.{})::numeric", name);
  }
  return fmt::format(
      "INSERT INTO {0} (tid, grp, delta) SELECT {1}, {7}, ARRAY[{2}] FROM (SELECT "
      "\"__ledger_group\"{3} FROM __trellis_old WHERE \"__present\" UNION ALL SELECT "
      "{4}.\"__ledger_group\"{5} FROM __trellis_src AS {4}{8}) AS __d (grp{6}) GROUP BY __d.grp",
      kGroupsTable, d.id, sums, removed, ident(d.alias), added, names,
      to_groups_table(d, "__d.grp"), joined_aliases(d));
}

// The page's ledger entries before the rewrite, present or not: where each
// is (its ctid, for the rewrite to write it without a second probe of the
// ledger), its key and stored columns (to tell which keys lack an entry
// and which entries differ) and, when deltas are recorded, its
// contributions. The key slot locks keep every other writer of these
// entries out until commit, so the ctids stay theirs.
std::string old_entries_where(const TransformDef& d, bool with_deltas, const std::string& filter) {
  std::string alias = ident(d.alias);
  std::vector<Column> stored = ledger_key(d);
  for (const auto& c : ledger_columns(d)) stored.push_back(c);
  std::string cols =
      join<Column>(stored, ", ", [&](const Column& c) { return alias + "." + ident(c.name); });
  std::string scope;
  if (with_deltas) {
    std::vector<std::string> contribs = contributions(d);
    for (size_t i = 0; i < contribs.size(); ++i)
      cols += fmt::format(", {} AS \"__d{}\"", contribs[i], i + 1);
    scope = joined_aliases(d);
  }
  return fmt::format(
      "SELECT {0}.ctid AS \"__ctid\", {1}, {0}.\"__ledger_group\", {0}.\"__present\" FROM {2} AS "
      "{0}{3} WHERE {4}",
      alias, cols, ledger(d), scope, filter);
}

// The page's keys (of __trellis_keys) as a filter of rows read as d's alias.
std::string in_page_keys(const TransformDef& d) {
  return fmt::format("{} IN (SELECT {} FROM __trellis_keys)", key_tuple(d.key, ident(d.alias)),
                     join<Column>(d.key, ", ", [](const Column& c) { return ident(c.name); }));
}

// A source row as a ledger entry: key, ledger columns and the encoded
// group, over the source's alias.
std::string entry_columns(const TransformDef& d) {
  std::string alias = ident(d.alias);
  std::vector<Column> stored = ledger_key(d);
  for (const auto& c : ledger_columns(d)) stored.push_back(c);
  auto joined = joined_ledger_columns(d);
  auto fan = d.ledger_fan_key();
  auto value = [&](const Column& c) {
    for (const auto& f : fan)
      if (f.column.name == c.name) return ident(f.alias) + "." + ident(f.joined_column);
    for (size_t i = 0; i < d.group.size(); ++i)
      if (d.group[i].name == c.name) return group_value(d, i, alias);
    for (const auto& j : joined)
      if (j.stored.name == c.name) return j.read;
    return alias + "." + ident(c.name);
  };
  return join<Column>(stored, ", ",
                      [&](const Column& c) { return value(c) + " AS " + ident(c.name); }) +
         ", " + encode_group(d, alias) + " AS \"__ledger_group\"";
}

std::string and_where(const TransformDef& d) {
  return d.where_sql ? " AND (" + *d.where_sql + ")" : "";
}

// The current source rows of the page's keys (those the WHERE keeps) as
// ledger entries.
std::string entry_sources_where(const TransformDef& d, const std::string& filter) {
  return fmt::format("SELECT {} FROM {} WHERE {}{}", entry_columns(d), d.from_clause(), filter,
                     and_where(d));
}

// The page's entries before and after (__trellis_old, __trellis_src). Over
// a join that fans out, __trellis_keys holds the page's whole source keys,
// and each partial one's pairs drive a part of their own (shared_sql.hpp,
// fanned_parts), as in the 1-1 re-derive: a changed fanning row rewrites
// the entries it reaches, not every entry of its source key. Two fanning
// joins' pairs may reach one entry twice, so both sides are then made
// distinct (an entry counted twice would fold its deltas twice).
struct PageEntries {
  std::string keys, src, old;
};
PageEntries page_entries(const TransformDef& d, bool with_deltas) {
  std::string in_keys = in_page_keys(d);
  PageEntries out{page_keys_cte(d), entry_sources_where(d, in_keys),
                  old_entries_where(d, with_deltas, in_keys)};
  if (!d.fans_out()) return out;
  out.keys = whole_roots(d);
  out.keys = out.keys.substr(1, out.keys.size() - 2);
  for (const auto& part : fanned_parts(d, d.ledger_fan_key(), ident(d.alias))) {
    out.src += " UNION ALL " + per_pair(part.drive, entry_sources_where(d, part.live));
    out.old += " UNION ALL " + per_pair(part.drive, old_entries_where(d, with_deltas, part.held));
  }
  if (d.fanning_joins() > 1) {
    out.src =
        fmt::format("SELECT DISTINCT ON {} * FROM ({}) __u", key_tuple(ledger_key(d), ""), out.src);
    out.old = fmt::format("SELECT DISTINCT ON (\"__ctid\") * FROM ({}) __u", out.old);
  }
  return out;
}

// The ledger's columns, as an INSERT's column list.
std::string ledger_column_list(const TransformDef& d) {
  std::string cols =
      join<Column>(ledger_key(d), ", ", [](const Column& c) { return ident(c.name); });
  for (const auto& c : ledger_columns(d)) cols += ", " + ident(c.name);
  return "(" + cols + ", \"__ledger_group\", \"__present\")";
}

std::string rewrite_entries(const TransformDef& d, bool with_deltas) {
  PageEntries entries = page_entries(d, with_deltas && d.any_incremental());
  std::string sets, old_row, new_row;
  for (const auto& c : ledger_columns(d)) {
    sets += ident(c.name) + " = __s." + ident(c.name) + ", ";
    old_row += "__o." + ident(c.name) + ", ";
    new_row += "__s." + ident(c.name) + ", ";
  }
  // An entry is rewritten only when it differs (compared as text, so a
  // value written differently counts); a key without an entry gets one;
  // an entry without a source row goes. Entries are written by ctid.
  std::string differs = fmt::format(
      "({}__o.\"__ledger_group\", __o.\"__present\")::text IS DISTINCT FROM ({}__s."
      "\"__ledger_group\", true)::text",
      old_row, new_row);
  return fmt::format(
      "WITH __trellis_keys AS ({0}), __trellis_src AS ({1}), __trellis_old AS ({2}), "
      "__trellis_touch AS ({3}), "
      "__trellis_upd AS (UPDATE {4} __l SET {5}\"__ledger_group\" = __s.\"__ledger_group\", "
      "\"__present\" = true FROM __trellis_src __s JOIN __trellis_old __o ON {6} WHERE __l.ctid = "
      "__o.\"__ctid\" AND {7}), "
      "__trellis_ins AS (INSERT INTO {4} {8} SELECT __s.*, true FROM __trellis_src __s WHERE NOT "
      "EXISTS (SELECT 1 FROM __trellis_old __o WHERE {6})), "
      "__trellis_del AS (DELETE FROM {4} __l USING __trellis_old __o WHERE __l.ctid = "
      "__o.\"__ctid\" AND NOT EXISTS (SELECT 1 FROM __trellis_src __s WHERE {6})) SELECT 1",
      entries.keys, entries.src, entries.old, touched_groups(d, with_deltas), ledger(d), sets,
      ledger_key_equal(d, "__o", "__s"), differs, ledger_column_list(d));
}

// The build range ($1, $2] of the source (NULL: an open end) as present
// ledger entries, for the rows the WHERE keeps.
std::string range_entry_sources(const TransformDef& d) {
  std::string alias = ident(d.alias);
  return fmt::format(
      "SELECT {}, true AS \"__present\" FROM {} WHERE ($1::text[] IS NULL OR {}) AND "
      "($2::text[] IS NULL OR {}){}",
      entry_columns(d), d.from_clause(), key_after(d.key, alias, "$1::text[]"),
      key_at_most(d.key, alias, "$2::text[]"), and_where(d));
}

std::string range_insert_entries(const TransformDef& d) {
  return fmt::format("INSERT INTO {} {} {}", ledger(d), ledger_column_list(d),
                     range_entry_sources(d));
}

// Upserts the range's entries that differ (compared as text, as the
// drain's rewrite does) and deletes the ledger's entries in the range whose
// source rows are gone or filtered out.
std::string range_rewrite_entries(const TransformDef& d) {
  std::string sets, old_row, new_row;
  for (const auto& c : ledger_columns(d)) {
    sets += ident(c.name) + " = EXCLUDED." + ident(c.name) + ", ";
    old_row += "__l." + ident(c.name) + ", ";
    new_row += "EXCLUDED." + ident(c.name) + ", ";
  }
  return fmt::format(
      "WITH __trellis_src AS MATERIALIZED ({0}), __trellis_up AS (INSERT INTO {1} AS __l {2} "
      "SELECT * FROM __trellis_src ON CONFLICT {3} DO UPDATE SET {4}\"__ledger_group\" = "
      "EXCLUDED.\"__ledger_group\", \"__present\" = true WHERE ({5}__l.\"__ledger_group\", "
      "__l.\"__present\")::text IS DISTINCT FROM ({6}EXCLUDED.\"__ledger_group\", true)::text "
      "RETURNING 1), __trellis_del AS (DELETE FROM {1} AS __l WHERE ($1::text[] IS NULL OR {7}) "
      "AND ($2::text[] IS NULL OR {8}) AND NOT EXISTS (SELECT 1 FROM __trellis_src __s WHERE {9}) "
      "RETURNING 1) SELECT (SELECT count(*) FROM __trellis_src), (SELECT count(*) FROM "
      "__trellis_up), (SELECT count(*) FROM __trellis_del)",
      range_entry_sources(d), ledger(d), ledger_column_list(d), key_tuple(ledger_key(d), ""), sets,
      old_row, new_row, key_after(d.key, "__l", "$1::text[]"),
      key_at_most(d.key, "__l", "$2::text[]"), ledger_key_equal(d, "__s", "__l"));
}

std::string lock_groups(const TransformDef& d) {
  std::vector<Column> cols = {{"__group", group_type(d), "", true}};
  cols.insert(cols.end(), d.group.begin(), d.group.end());
  std::string grp = from_groups_table(d, "g.grp");
  std::string rows = fmt::format("SELECT {}{} FROM {} g WHERE g.tid = {}", grp,
                                 decode_group(d, grp), kGroupsTable, d.id);
  return lock_rows(target(d), cols, "(\"__group\")", rows);
}

// The definition's grouped SELECT under the source's alias over the
// definition's FROM clause (`over_ledger` false: the oracle) or over the
// ledger `from_table` (seen under the joined aliases too), whose entries carry
// the group columns by name and the encoded group. `where` filters rows;
// `in_groups(g)`, when given, is the condition that encoded group g is one
// to compute. `fields` picks the fields computed, `extra` adds select
// items. Over the ledger the rows carry "__group". A one-row aggregate is
// not grouped at all, so its one row is there with no rows to aggregate
// (COUNT 0, SUM NULL), when `in_groups` admits its one group (HAVING).
std::string grouped_select(const TransformDef& d, const std::string& from_table, bool over_ledger,
                           const std::string& where,
                           const std::function<std::string(const std::string&)>& in_groups,
                           const std::vector<Field>& fields, const std::string& extra = "") {
  std::string alias = ident(d.alias);
  std::vector<std::string> cols, by;
  if (over_ledger) {
    cols.push_back((d.single_group() ? encode_group(d, alias) : alias + ".\"__ledger_group\"") +
                   " AS \"__group\"");
    if (!d.single_group()) by.push_back(alias + ".\"__ledger_group\"");
  }
  for (size_t i = 0; i < d.group.size(); ++i) {
    std::string value =
        over_ledger ? alias + "." + ident(d.group[i].name) : group_value(d, i, alias);
    cols.push_back(value + " AS " + ident(d.group[i].name));
    by.push_back(value);
  }
  for (const auto& f : fields) cols.push_back("(" + f.sql + ") AS " + ident(f.name));
  std::string filter = where;
  if (in_groups && !d.single_group())
    filter += (filter.empty() ? " WHERE " : " AND ") + in_groups(alias + ".\"__ledger_group\"");
  std::string tail = by.empty() ? "" : " GROUP BY " + fmt::format("{}", fmt::join(by, ", "));
  if (in_groups && d.single_group()) tail += " HAVING " + in_groups(encode_group(d, alias));
  std::string from =
      over_ledger ? from_table + " AS " + alias + joined_aliases(d) : d.from_clause();
  return fmt::format("SELECT {}{} FROM {}{}{}", fmt::join(cols, ", "), extra, from, filter, tail);
}

// The touched groups' present ledger rows, grouped, for `fields`.
std::string ledger_aggregate(const TransformDef& d, const std::vector<Field>& fields,
                             const std::string& extra = "") {
  return grouped_select(
      d, ledger(d), true, fmt::format(" WHERE {}.\"__present\"", ident(d.alias)),
      [](const std::string& g) { return g + " IN (SELECT grp FROM __trellis_g)"; }, fields, extra);
}

// A group row `source` computed from the ledger, set onto the target row
// __t: the SET list of every field and state column, and the condition
// that some of them differ (compared as the drain compares them). Nothing
// when the target has no such column.
struct GroupRewrite {
  std::string sets;
  std::string differs;
};
std::optional<GroupRewrite> group_rewrite(const TransformDef& d, const std::string& source) {
  std::vector<std::string> written;
  for (const auto& f : d.fields) written.push_back(f.name);
  for (const auto& c : state_columns(d)) written.push_back(c);
  if (written.empty()) return std::nullopt;
  GroupRewrite out;
  out.sets = join<std::string>(written, ", ", [&](const std::string& c) {
    return ident(c) + " = " + source + "." + ident(c);
  });
  out.differs =
      join<Field>(d.fields, " OR ", [&](const Field& f) { return changed_from(f, source); });
  for (const auto& c : state_columns(d))
    out.differs += fmt::format("{0}__t.{1} IS DISTINCT FROM {2}.{1}",
                               out.differs.empty() ? "" : " OR ", ident(c), source);
  return out;
}

// Groups phase: every field and the state set from the ledger, empty groups
// deleted; rows already equal are left unwritten.
std::string recompute(const TransformDef& d) {
  std::string agg = ledger_aggregate(d, d.fields, absolute_state(d));
  std::string update = "SELECT 1 WHERE false";
  if (auto rewrite = group_rewrite(d, "__s"))
    update = fmt::format(
        "UPDATE {} AS __t SET {} FROM __trellis_agg __s WHERE __t.\"__group\" = __s.\"__group\" "
        "AND ({}) RETURNING 1",
        target(d), rewrite->sets, rewrite->differs);
  return fmt::format(
      "WITH __trellis_g AS (SELECT {5} AS grp FROM {0} WHERE tid = {1}), __trellis_agg AS ({2}), "
      "__trellis_upd AS ({3}), __trellis_del AS (DELETE FROM {4} AS __t USING __trellis_g __g "
      "WHERE __t.\"__group\" = __g.grp AND NOT EXISTS (SELECT 1 FROM __trellis_agg __s WHERE "
      "__s.\"__group\" = __t.\"__group\") RETURNING 1) "
      "SELECT (SELECT count(*) FROM __trellis_upd), (SELECT count(*) FROM __trellis_del)",
      kGroupsTable, d.id, agg, update, target(d), from_groups_table(d, "grp"));
}

// Incremental field f computed from the state columns of the row `alias`
// (NULL for a group without members).
std::string incremental_field(const TransformDef& d, const Field& f, const std::string& alias) {
  if (d.single_group()) return "(" + field_from_state(d, f, alias) + ")";
  return fmt::format("CASE WHEN {}.\"__n\" > 0 THEN ({}) END", alias,
                     field_from_state(d, f, alias));
}

// True when every field is computed from the running state alone (COUNT,
// SUM, AVG of the group's members): none reads the ledger for its group.
bool state_only(const TransformDef& d) {
  if (!d.any_incremental()) return false;
  for (const auto& f : d.fields) {
    if (!f.incremental) return false;
    for (const auto& c : f.calls)
      if (c.kind == "min" || c.kind == "max") return false;
  }
  return true;
}

// Over a row under the source's alias that carries "__group", the group
// columns and the state columns: `, <alias>.<state column>, ...` and each
// incremental field computed from that state, named (NULL for a group
// without members).
std::string state_and_incremental_fields(const TransformDef& d) {
  std::string alias = ident(d.alias);
  std::string cols;
  for (const auto& c : state_columns(d)) cols += ", " + alias + "." + ident(c);
  for (const auto& f : d.fields)
    if (f.incremental) cols += ", " + incremental_field(d, f, alias) + " AS " + ident(f.name);
  return cols;
}

// Drain page: fold each touched group's delta into its state, compute the
// incremental fields from the new state and recompute the others from the
// ledger; a group whose member count reaches zero is deleted. Before a
// build's groups phase has run, state may be partial (even negative); such
// rows keep their state and get NULL fields until that phase sets them.
std::string apply_deltas(const TransformDef& d) {
  if (!d.any_incremental()) return recompute(d);
  std::string alias = ident(d.alias);
  std::vector<std::string> state = state_columns(d);
  std::string state_cols;
  for (size_t i = 0; i < state.size(); ++i)
    state_cols += fmt::format(", (__t.{0} + __g.delta[{1}])::{2} AS {0}", ident(state[i]), i + 1,
                              state_column_type(state[i]));
  std::string group_cols;
  for (const auto& g : d.group) group_cols += ", __t." + ident(g.name);
  std::vector<Field> recomputed;
  for (const auto& f : d.fields)
    if (!f.incremental) recomputed.push_back(f);
  // Incremental fields are evaluated over the state alone (bare references
  // are group columns), then joined to the recomputed ones.
  std::string new_rows = fmt::format("SELECT {0}.\"__group\"{1} FROM __trellis_state AS {0}", alias,
                                     state_and_incremental_fields(d));
  std::string agg_cte;
  if (!recomputed.empty()) {
    agg_cte = fmt::format("__trellis_agg AS ({}), ", ledger_aggregate(d, recomputed));
    new_rows = fmt::format(
        "SELECT __i.*{} FROM ({}) __i LEFT JOIN __trellis_agg __a ON __a.\"__group\" = "
        "__i.\"__group\"",
        join<Field>(recomputed, "", [](const Field& f) { return ", __a." + ident(f.name); }),
        new_rows);
  }
  std::vector<std::string> written = state;
  for (const auto& f : d.fields) written.push_back(f.name);
  std::string sets = join<std::string>(
      written, ", ", [](const std::string& c) { return ident(c) + " = __s." + ident(c); });
  return fmt::format(
      "WITH __trellis_g AS (SELECT {8} AS grp, delta FROM {0} WHERE tid = {1}), "
      "__trellis_state AS (SELECT __t.\"__group\"{2}{3} FROM {4} AS __t JOIN __trellis_g __g ON "
      "__t.\"__group\" = __g.grp), {5}"
      "__trellis_new AS ({6}), "
      "__trellis_upd AS (UPDATE {4} AS __t SET {7} FROM __trellis_new __s WHERE __t.\"__group\" = "
      "__s.\"__group\" AND {10} RETURNING 1), "
      "__trellis_del AS (DELETE FROM {4} AS __t USING __trellis_new __s WHERE __t.\"__group\" = "
      "__s.\"__group\" AND {9} RETURNING 1) "
      "SELECT (SELECT count(*) FROM __trellis_upd), (SELECT count(*) FROM __trellis_del)",
      kGroupsTable, d.id, group_cols, state_cols, target(d), agg_cte, new_rows, sets,
      from_groups_table(d, "grp"), emptied(d, "__s.\"__n\""), emptied(d, "__s.\"__n\"", false));
}

// The last group of the next chunk of groups: the $2-th group after the
// cursor $1 (NULL: from the start) among the groups the ledger or the target
// holds, or no row when fewer are left. It walks the two indexes group by
// group (each step the smallest group of either index above the one before,
// a descent of each index), so a chunk costs $2 descents however many entries
// each group has; reading the union of all groups instead costs a pass over
// the whole ledger per chunk. Every group array has at least one element, so
// '{}' sorts before all of them and stands for "from the start".
std::string group_chunk_bound(const TransformDef& d) {
  auto next_after = [&](const std::string& after) {
    return fmt::format(
        "LEAST((SELECT min(__l.\"__ledger_group\") FROM {0} __l WHERE __l.\"__present\" AND "
        "__l.\"__ledger_group\" > {2}), (SELECT min(__t.\"__group\") FROM {1} __t WHERE "
        "__t.\"__group\" > {2}))",
        ledger(d), target(d), after);
  };
  return fmt::format(
      "WITH RECURSIVE __s(g, i) AS (SELECT {}, 1 UNION ALL SELECT {}, __s.i + 1 FROM __s WHERE "
      "__s.g IS NOT NULL AND __s.i < $2::int) SELECT {} FROM __s WHERE __s.i = $2::int AND __s.g "
      "IS NOT NULL",
      next_after("COALESCE(" + group_param(d, "$1") + ", " +
                 (d.compare_group_text ? "''" : "'{}'::text[]") + ")"),
      next_after("__s.g"), group_cursor(d, "g"));
}

// The $2-th ledger entry after group $1 (NULL: from the start) in the
// group index, or no row when fewer are left: the upper bound of a group
// range of about $2 entries (all of the bound's group falls inside it).
std::string group_range_bound(const TransformDef& d) {
  return fmt::format(
      "SELECT {} FROM {} WHERE ($1::text[] IS NULL OR \"__ledger_group\" > {}) ORDER BY "
      "\"__ledger_group\" OFFSET $2::int - 1 LIMIT 1",
      group_cursor(d, "\"__ledger_group\""), ledger(d), group_param(d, "$1"));
}

// Target rows of the groups in ($1, $2] (NULL: an open end): each computed
// once from the present ledger entries of that range of the group index.
// The group columns are decoded from the encoded group as the drain writes
// them, except integers, whose entries' stored values are the decoded ones
// (a JSON parse per group spared). A state-only definition aggregates its
// state alone and computes its fields from it, as its drain does (a SUM
// field would otherwise sum each entry twice, once for the state).
std::string range_groups(const TransformDef& d) {
  std::string alias = ident(d.alias);
  bool from_state = state_only(d);
  std::string grouped = grouped_select(
      d, ledger(d), true, fmt::format(" WHERE {}.\"__present\"", alias),
      [&](const std::string& g) {
        return fmt::format(
            "($1::text[] IS NULL OR {0} > {1}) AND ($2::text[] IS NULL OR {0} <= {2})", g,
            group_param(d, "$1"), group_param(d, "$2"));
      },
      from_state ? std::vector<Field>{} : d.fields, absolute_state(d));
  std::string group_cols =
      integer_group_encoding(d)
          ? join<Column>(d.group, "",
                         [&](const Column& c) {
                           return ", " + alias + "." + ident(c.name) + " AS " + ident(c.name);
                         })
          : decode_group(d, alias + ".\"__group\"");
  std::string cols;
  for (const auto& f : d.fields)
    cols += ", " + (from_state ? incremental_field(d, f, alias) : alias + "." + ident(f.name)) +
            " AS " + ident(f.name);
  for (const auto& c : state_columns(d)) cols += ", " + alias + "." + ident(c);
  return fmt::format("SELECT {0}.\"__group\"{1}{2} FROM ({3}) {0}", alias, group_cols, cols,
                     grouped);
}

std::string target_column_list(const TransformDef& d) {
  std::string cols = "\"__group\"";
  for (const auto& g : d.group) cols += ", " + ident(g.name);
  for (const auto& f : d.fields) cols += ", " + ident(f.name);
  for (const auto& c : state_columns(d)) cols += ", " + ident(c);
  return "(" + cols + ")";
}

// In group order, so the target's key index is appended to rather than
// written at random (a range read by the group index is in that order
// already; the whole ledger's range comes out of a hash aggregate).
std::string group_range_insert(const TransformDef& d) {
  return fmt::format("INSERT INTO {} {} {} ORDER BY 1", target(d), target_column_list(d),
                     range_groups(d));
}

// Rows equal to what the range computes are left unwritten (compared as the
// drain compares them), so a rebuild over a correct target writes nothing.
std::string group_range_rewrite(const TransformDef& d) {
  std::string on_conflict = "DO NOTHING";
  if (auto rewrite = group_rewrite(d, "EXCLUDED"))
    on_conflict = fmt::format("DO UPDATE SET {} WHERE {}", rewrite->sets, rewrite->differs);
  return fmt::format(
      "WITH __trellis_agg AS MATERIALIZED ({0}), __trellis_up AS (INSERT INTO {1} AS __t {2} "
      "SELECT * FROM __trellis_agg ON CONFLICT (\"__group\") {3} RETURNING 1), __trellis_del AS "
      "(DELETE FROM {1} AS __t WHERE ($1::text[] IS NULL OR __t.\"__group\" > {4}) AND "
      "($2::text[] IS NULL OR __t.\"__group\" <= {5}) AND NOT EXISTS (SELECT 1 FROM "
      "__trellis_agg __s WHERE __s.\"__group\" = __t.\"__group\") RETURNING 1) SELECT (SELECT "
      "count(*) FROM __trellis_agg), (SELECT count(*) FROM __trellis_up), (SELECT count(*) FROM "
      "__trellis_del)",
      range_groups(d), target(d), target_column_list(d), on_conflict, group_param(d, "$1"),
      group_param(d, "$2"));
}

// Drain page of a state-only definition: one upsert folds each touched
// group's delta into its state and sets its fields from the new state, in
// group-key order (I5), inserting the groups the target lacks. ON CONFLICT
// DO UPDATE adds the delta to the newest committed version of a row it
// locks, so drains that touch one group fold into it one after another
// without a placeholder lock; nothing here reads the ledger, so no snapshot
// can miss another page's entries. Groups whose member count reaches zero
// are recorded again in the touched-groups table, marked `emptied`, and
// delete_emptied_groups removes them: a row cannot be upserted and deleted
// by one statement.
std::string upsert_deltas(const TransformDef& d) {
  std::string alias = ident(d.alias);
  std::vector<std::string> state = state_columns(d);
  std::string grp = from_groups_table(d, "g.grp");
  std::string inserted_state, folded_state, group_cols, state_list;
  for (size_t i = 0; i < state.size(); ++i) {
    inserted_state += fmt::format(", (g.delta[{}])::{} AS {}", i + 1, state_column_type(state[i]),
                                  ident(state[i]));
    folded_state += fmt::format(", (__t.{0} + EXCLUDED.{0})::{1} AS {0}", ident(state[i]),
                                state_column_type(state[i]));
    state_list += (i ? ", " : "") + ident(state[i]);
  }
  for (const auto& g : d.group) group_cols += ", __t." + ident(g.name);
  std::string field_list =
      join<Field>(d.fields, "", [](const Field& f) { return ", " + ident(f.name); });
  std::string group_list =
      join<Column>(d.group, "", [](const Column& c) { return ", " + ident(c.name); });
  // Every field is incremental, so these are the state and all the fields, in
  // the order of the column lists above.
  std::string fields = state_and_incremental_fields(d);
  return fmt::format(
      "WITH __trellis_u AS (INSERT INTO {0} AS __t (\"__group\"{1}, {2}{3}) SELECT "
      "{4}.\"__group\"{5}{6} FROM (SELECT {7} AS \"__group\"{8}{9} FROM {10} g WHERE g.tid = "
      "{11}) AS {4} ORDER BY 1 ON CONFLICT (\"__group\") DO UPDATE SET ({2}{3}) = (SELECT {15} "
      "FROM (SELECT __t.\"__group\"{12}{13}) AS {4}) RETURNING __t.\"__group\", __t.\"__n\"), "
      "__trellis_emptied AS (INSERT INTO {10} (tid, grp, emptied) SELECT {11}, {14}, true FROM "
      "__trellis_u __u WHERE {16} RETURNING 1) SELECT count(*) FROM "
      "__trellis_emptied",
      target(d), group_list, state_list, field_list, alias,
      join<Column>(d.group, "",
                   [&](const Column& c) { return ", " + alias + "." + ident(c.name); }),
      fields, grp, decode_group(d, grp), inserted_state, kGroupsTable, d.id, group_cols,
      folded_state, to_groups_table(d, "__u.\"__group\""), fields.substr(2),
      emptied(d, "__u.\"__n\""));
}

// Few groups: a fresh build of a state-only definition folds the ledger
// into its groups by ranges of the ledger's heap blocks, each range one
// GROUP BY of its entries (a TID range scan, pages read in order) whose
// sums are added to the groups' state, the groups the target lacks
// inserted, in group order (I5). Reading a range of the group index
// instead fetches each entry's heap row at random: with 100 groups of
// 100,000 entries, 1.2 s per group. The fold is exact because the ranges
// partition the ledger's heap, the ledger does not change while groups are
// written (drains park), the target starts empty (group_fold_check) and
// each range commits with its claim; a range's fold is a sum of
// contributions, so it needs every field to come from the state. Both
// bounds are always conditions on ctid (the open end is past the last
// block PostgreSQL can address), so a generic plan is a TID range scan too.
// Whether the target is empty; with group_chunk_bound finding no
// (kFoldMaxGroups + 1)-th group, a build's group phase folds.
std::string group_fold_check(const TransformDef& d) {
  return fmt::format("SELECT NOT EXISTS (SELECT 1 FROM {})", target(d));
}

// The groups of about `entries` of the ledger's present entries, by whole
// heap blocks, the same blocks at every call while the ledger does not
// change.
std::string ledger_sample(const TransformDef& d, int entries) {
  return fmt::format(
      "SELECT \"__ledger_group\" FROM {0} TABLESAMPLE SYSTEM (least(100, {1} * 100.0 / "
      "greatest(1, pg_relation_size({2}::regclass) / current_setting('block_size')::bigint * "
      "{3}))) REPEATABLE (0) WHERE \"__present\"",
      ledger(d), entries, literal(ledger(d)), kFoldEntriesPerBlock);
}

// Before the ledger has its group index (a fresh build), the groups of a
// sample: the choice between folding and group ranges only costs time, so
// a sample that misses rare groups is no error.
std::string group_fold_sample(const TransformDef& d) {
  return fmt::format("SELECT count(DISTINCT \"__ledger_group\") FROM ({}) __s",
                     ledger_sample(d, kFoldSampleEntries));
}

// The parts' bounds are the last group of each of $2 equal tiles of the
// sample in group order (but the last tile's): parts of about equal
// entries. Each call takes the first bound above the cursor, so the parts
// partition the groups whatever the bounds are (a sample that differs
// between calls only makes the parts unequal).
std::string group_split_bound(const TransformDef& d) {
  return fmt::format(
      "SELECT {0} FROM (SELECT min(__q.b) AS b FROM (SELECT max(__t.g) AS b FROM (SELECT "
      "\"__ledger_group\" AS g, ntile($2::int) OVER (ORDER BY \"__ledger_group\") AS tile FROM "
      "({1}) __s) __t GROUP BY __t.tile HAVING __t.tile < $2::int) __q WHERE $1::text[] IS NULL "
      "OR __q.b > {2}) __m WHERE __m.b IS NOT NULL",
      group_cursor(d, "__m.b"), ledger_sample(d, kSplitSampleEntries), group_param(d, "$1"));
}

std::string fold_range_bound(const TransformDef& d) {
  return fmt::format(
      "SELECT CASE WHEN __b.hi < __b.blocks THEN ARRAY['ctid', __b.hi::text] END FROM (SELECT "
      "COALESCE((($1::text[])[2])::bigint, 0) + GREATEST(1, $2::bigint / {}) AS hi, "
      "pg_relation_size({}::regclass) / current_setting('block_size')::bigint AS blocks) __b",
      kFoldEntriesPerBlock, literal(ledger(d)));
}

std::string fold_range_insert(const TransformDef& d) {
  std::string alias = ident(d.alias);
  std::string in_blocks = fmt::format(
      " WHERE {0}.\"__present\" AND {0}.ctid >= format('(%s,0)', COALESCE(($1::text[])[2], "
      "'0'))::tid AND {0}.ctid < format('(%s,0)', COALESCE(($2::text[])[2], '4294967295'))::tid",
      alias);
  std::string grouped =
      grouped_select(d, ledger(d), true, in_blocks, nullptr, d.fields, absolute_state(d));
  std::vector<std::string> state = state_columns(d);
  std::string cols, state_list, folded_state, group_cols;
  for (const auto& f : d.fields) cols += ", __a." + ident(f.name);
  for (size_t i = 0; i < state.size(); ++i) {
    cols += ", __a." + ident(state[i]);
    state_list += (i ? ", " : "") + ident(state[i]);
    folded_state += fmt::format(", (__t.{0} + EXCLUDED.{0})::{1} AS {0}", ident(state[i]),
                                state_column_type(state[i]));
  }
  for (const auto& g : d.group) group_cols += ", __t." + ident(g.name);
  std::string field_list =
      join<Field>(d.fields, "", [](const Field& f) { return ", " + ident(f.name); });
  return fmt::format(
      "INSERT INTO {0} AS __t {1} SELECT __a.\"__group\"{2}{3} FROM ({4}) __a ORDER BY 1 ON "
      "CONFLICT (\"__group\") DO UPDATE SET ({5}{6}) = (SELECT {7} FROM (SELECT "
      "__t.\"__group\"{8}{9}) AS {10})",
      target(d), target_column_list(d), decode_group(d, "__a.\"__group\""), cols, grouped,
      state_list, field_list, state_and_incremental_fields(d).substr(2), group_cols, folded_state,
      alias);
}

// The groups upsert_deltas emptied.
std::string delete_emptied_groups(const TransformDef& d) {
  return fmt::format(
      "DELETE FROM {} AS __t USING {} g WHERE g.tid = {} AND g.emptied AND __t.\"__group\" = {} "
      "AND __t.\"__n\" = 0",
      target(d), kGroupsTable, d.id, from_groups_table(d, "g.grp"));
}

}  // namespace

TransformSql compile_aggregate(const TransformDef& d) {
  TransformSql sql;
  std::string source = qualified(d.source_schema, d.source_table);
  sql.create = create(d);
  sql.side_create.assign(sql.create.begin() + 1, sql.create.end());
  sql.ledger.group_indexes = ledger_group_indexes(d);
  sql.ledger.key_index = ledger_key_index(d);
  std::string key_missing = fmt::format(
      "NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index WHERE indrelid = {}::regclass AND "
      "indisunique)",
      literal(ledger(d)));
  std::string group_indexes_missing = fmt::format(
      "NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index i JOIN pg_catalog.pg_attribute a ON "
      "a.attrelid = i.indrelid AND a.attnum = i.indkey[0] WHERE i.indrelid = {}::regclass AND "
      "a.attname = '__ledger_group')",
      literal(ledger(d)));
  sql.ledger.key_missing = "SELECT " + key_missing;
  sql.ledger.group_indexes_missing = "SELECT " + group_indexes_missing;
  sql.ledger.drain_reads_groups = !state_only(d);
  sql.ledger.drain_missing =
      sql.ledger.drain_reads_groups
          ? fmt::format("SELECT ({}) OR ({})", key_missing, group_indexes_missing)
          : sql.ledger.key_missing;
  sql.ledger.lock = fmt::format("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE", ledger(d));
  int64_t task = (kLedgerIndexLockTag << 32) + int64_t{d.id} * 2;
  sql.ledger.claim_group_indexes = fmt::format("SELECT pg_try_advisory_xact_lock({})", task);
  sql.ledger.claim_key_index = fmt::format("SELECT pg_try_advisory_xact_lock({})", task + 1);
  sql.side_drop = {"DROP TABLE IF EXISTS " + ledger(d)};
  sql.drop = {sql.side_drop.front(), "DROP TABLE IF EXISTS " + target(d)};
  if (state_only(d))
    sql.steps = {lock_key_slots(d), rewrite_entries(d, true), upsert_deltas(d),
                 delete_emptied_groups(d)};
  else
    sql.steps = {lock_key_slots(d), rewrite_entries(d, true), lock_groups(d), apply_deltas(d)};
  sql.build_steps = {lock_key_slots(d), rewrite_entries(d, false)};
  sql.group_steps = {lock_groups(d), recompute(d)};
  // Groups the ledger holds and groups the target holds (a RESUME may have
  // emptied some): every one is recomputed once.
  // A one-row aggregate's group is there even with no entries.
  std::string all_groups = fmt::format(
      "(SELECT \"__ledger_group\" AS g FROM {} WHERE \"__present\" UNION SELECT \"__group\" "
      "FROM {}{}) __all",
      ledger(d), target(d),
      d.single_group() ? " UNION SELECT " + encode_group(d, ident(d.alias)) : std::string());
  sql.group_chunk_bound = group_chunk_bound(d);
  sql.page_group_range = fmt::format(
      "INSERT INTO {} (tid, grp) SELECT {}, {} FROM {} WHERE ($1::text[] IS NULL OR g > {}) AND "
      "($2::text[] IS NULL OR g <= {})",
      kGroupsTable, d.id, to_groups_table(d, "g"), all_groups, group_param(d, "$1"),
      group_param(d, "$2"));
  sql.page_all_held_keys = page_all_keys(d, ledger(d));
  sql.held_keys_from = ledger(d);
  sql.page_all_source_keys = page_all_keys(d, source);
  // Over a join that fans out, a range ends after about range_rows rows of
  // the join (one_to_one.cpp, fanned_chunk_bound).
  sql.source_chunk_bound = d.fans_out() ? chunk_bound_over(d.key, d.from_clause(), ident(d.alias))
                                        : chunk_bound(d.key, source);
  sql.sweep_chunk_bound = chunk_bound(d.key, ledger(d));
  sql.page_source_range = page_range(d, source);
  sql.page_sweep_range = page_range(d, ledger(d));
  sql.range_insert = range_insert_entries(d);
  sql.range_rewrite = range_rewrite_entries(d);
  sql.group_range_bound = group_range_bound(d);
  sql.group_range_insert = group_range_insert(d);
  sql.group_range_rewrite = group_range_rewrite(d);
  sql.group_split_bound = group_split_bound(d);
  if (state_only(d) && d.compare_group_text) {
    sql.group_fold_check = group_fold_check(d);
    sql.group_fold_sample = group_fold_sample(d);
    sql.fold_range_bound = fold_range_bound(d);
    sql.fold_range_insert = fold_range_insert(d);
  }
  sql.oracle_select = grouped_select(d, "", false, where_clause(d), nullptr, d.fields);
  sql.map_joined_keys = map_joined_keys(d, {ledger(d), d.ledger_fan_key()});
  return sql;
}

std::string recompute_with_state(const TransformDef& d) {
  return grouped_select(d, "", false, where_clause(d), nullptr, d.fields, absolute_state(d));
}

std::string group_rows(const TransformDef& d) {
  std::vector<std::string> cols;
  for (size_t i = 0; i < d.group.size(); ++i)
    cols.push_back(group_value(d, i, ident(d.alias)) + " AS " + ident(d.group[i].name));
  return fmt::format("SELECT {} FROM {}{}", fmt::join(cols, ", "), d.from_clause(),
                     where_clause(d));
}

}  // namespace trellis::compile
