// Random transform definitions; see random_program.hpp.
#include "generative/random_program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace trellis::gen {

std::string known_bugs_setting() {
  const char* v = std::getenv("TRELLIS_GEN_KNOWN_BUGS");
  return v ? v : "";
}

bool known_bug_included(const std::string& name) {
  std::string all = "," + known_bugs_setting() + ",";
  return all == ",all," || all.find("," + name + ",") != std::string::npos;
}

namespace {

struct Expr {
  std::string sql;
  Kind kind;
  bool tiny;
};

bool numeric_kind(Kind k) {
  return k == Kind::int4 || k == Kind::int8 || k == Kind::numeric;
}

// Row-level expressions over one column; none can overflow or divide by zero.
std::vector<Expr> row_exprs(const Column& c) {
  const std::string& n = c.name;
  switch (c.kind) {
    case Kind::int4:
      return {{n, Kind::int4, c.tiny},
              {n + " % 7", Kind::int4, true},
              {n + "::bigint + 1", Kind::int8, c.tiny},
              {n + "::numeric * 3", Kind::numeric, c.tiny},
              {n + " IS NULL", Kind::boolean, true},
              {"coalesce(" + n + ", 0)", Kind::int4, c.tiny},
              {"coalesce(" + n + "::text, '?')", Kind::text, c.tiny},
              {"CASE WHEN " + n + " > 0 THEN 'pos' WHEN " + n + " < 0 THEN 'neg' END", Kind::text,
               true}};
    case Kind::int8:
      return {{n, Kind::int8, c.tiny},
              {n + " / 3", Kind::int8, c.tiny},
              {n + " % 5", Kind::int8, true},
              {n + "::numeric * 2", Kind::numeric, c.tiny},
              {n + " > 0", Kind::boolean, true}};
    case Kind::numeric:
      return {{n, Kind::numeric, c.tiny},
              {n + "::text", Kind::text, c.tiny},
              {"round(" + n + ", 1)", Kind::numeric, c.tiny},
              {n + " * 2", Kind::numeric, c.tiny},
              {n + " + 1", Kind::numeric, c.tiny},
              {"abs(" + n + ")", Kind::numeric, c.tiny},
              {"sign(" + n + ")", Kind::numeric, true}};
    case Kind::text:
      return {{n, Kind::text, c.tiny},
              {"coalesce(" + n + ", '') || '!'", Kind::text, c.tiny},
              {"length(" + n + ")", Kind::int4, true},
              {"upper(" + n + ")", Kind::text, c.tiny},
              {n + " = ''", Kind::boolean, true},
              {"nullif(" + n + ", '')", Kind::text, c.tiny},
              {"left(" + n + ", 1)", Kind::text, true}};
    case Kind::boolean:
      return {{n, Kind::boolean, true},
              {"NOT " + n, Kind::boolean, true},
              {n + " IS TRUE", Kind::boolean, true},
              {"CASE WHEN " + n + " THEN 1 ELSE 0 END", Kind::int4, true}};
    case Kind::float8:
      return {{n, Kind::float8, c.tiny},
              {n + " * 2", Kind::float8, c.tiny},
              {"-" + n, Kind::float8, c.tiny},
              {"floor(" + n + ")", Kind::float8, c.tiny},
              {n + " > 0", Kind::boolean, true}};
    case Kind::other:
      break;
  }
  return {};
}

std::string predicate(Rng& rng, const Column& c) {
  const std::string& n = c.name;
  switch (c.kind) {
    case Kind::int4:
    case Kind::int8:
      return pick(rng, std::vector<std::string>{n + " > 0", n + " % 2 = 0", n + " IS NOT NULL",
                                                n + " IS NULL", n + " <> 1"});
    case Kind::numeric:
      return pick(rng, std::vector<std::string>{n + " >= 1", n + " IS NOT NULL", n + " < 0"});
    case Kind::text:
      return pick(rng, std::vector<std::string>{n + " <> ''", n + " IS DISTINCT FROM 'a'",
                                                "length(" + n + ") < 3"});
    case Kind::boolean:
      return pick(rng, std::vector<std::string>{n, "NOT " + n, n + " IS NOT FALSE"});
    case Kind::float8:
      return pick(rng, std::vector<std::string>{n + " > 0", n + " IS NULL", n + " <= 0.5"});
    case Kind::other:
      break;
  }
  return "true";
}

std::vector<Column> readable(const Relation& r) {
  std::vector<Column> out;
  for (const auto& c : r.columns)
    if (c.kind != Kind::other) out.push_back(c);
  return out;
}

std::string where_clause(Rng& rng, const Relation& r) {
  if (!chance(rng, 0.4)) return "";
  std::vector<Column> cols = readable(r);
  if (cols.empty()) return "";
  // Now and then a predicate that passes NULL: over a LEFT JOIN's column it
  // keeps the row without a match while rejecting matches.
  auto one = [&] {
    const Column& c = pick(rng, cols);
    std::string p = predicate(rng, c);
    return chance(rng, 0.25) ? "(" + c.name + " IS NULL OR " + p + ")" : p;
  };
  std::string w = one();
  if (chance(rng, 0.3)) w = "(" + w + (chance(rng, 0.5) ? ") AND (" : ") OR (") + one() + ")";
  return " WHERE " + w;
}

std::string order_by(const Relation& r) {
  std::string out;
  for (size_t i = 0; i < r.order_keys.size(); ++i) out += (i ? ", " : "") + r.order_keys[i];
  return out;
}

// Aggregate fields over one column.
std::vector<Expr> agg_exprs(const Column& c, const Relation& r) {
  const std::string& n = c.name;
  std::vector<Expr> out = {{"COUNT(" + n + ")", Kind::int8, false},
                           {"COUNT(DISTINCT " + n + ")", Kind::int8, true}};
  bool ordered = !r.order_keys.empty();
  if (numeric_kind(c.kind)) {
    Kind sum = c.kind == Kind::int4 ? Kind::int8 : Kind::numeric;
    out.insert(out.end(), {{"SUM(" + n + ")", sum, false},
                           {"AVG(" + n + ")", Kind::numeric, false},
                           {"MIN(" + n + ")", c.kind, c.tiny},
                           {"MAX(" + n + ")", c.kind, c.tiny},
                           {"STDDEV_SAMP(" + n + ")", Kind::numeric, false},
                           {"VAR_POP(" + n + ")", Kind::numeric, false},
                           {"SUM(" + n + ") / NULLIF(COUNT(*), 0)", sum, false},
                           {"MAX(" + n + ")::numeric - MIN(" + n + ")", Kind::numeric, false},
                           {"COALESCE(SUM(" + n + "), 0)", sum, false},
                           {"COUNT(*) FILTER (WHERE " + n + " > 0)", Kind::int8, true},
                           {"SUM(" + n + "::numeric * 2)", Kind::numeric, false}});
    if (c.kind != Kind::numeric)
      out.insert(out.end(),
                 {{"BIT_OR(" + n + ")", c.kind, false}, {"BIT_AND(" + n + ")", c.kind, false}});
  } else if (c.kind == Kind::text) {
    out.insert(out.end(), {{"MIN(" + n + ")", Kind::text, c.tiny},
                           {"MAX(" + n + ")", Kind::text, c.tiny},
                           {"MAX(length(" + n + "))", Kind::int4, false}});
    if (ordered)
      out.insert(out.end(),
                 {{"STRING_AGG(" + n + ", ',' ORDER BY " + n + ", " + order_by(r) + ")", Kind::text,
                   false},
                  {"ARRAY_AGG(" + n + " ORDER BY " + order_by(r) + ")", Kind::other, false}});
  } else if (c.kind == Kind::boolean) {
    out.insert(out.end(), {{"BOOL_AND(" + n + ")", Kind::boolean, true},
                           {"BOOL_OR(" + n + ")", Kind::boolean, true},
                           {"EVERY(" + n + ")", Kind::boolean, true},
                           {"COUNT(*) FILTER (WHERE " + n + ")", Kind::int8, true}});
  } else if (c.kind == Kind::float8) {
    // MIN/MAX over a group holding both 0 and -0 return whichever row comes
    // first (in the plain SELECT too), and the oracle renders float fields
    // with their sign; n + 0 turns -0 into 0 and keeps NaN and infinities.
    out.insert(out.end(), {{"SUM(" + n + ")", Kind::float8, false},
                           {"MIN(" + n + " + 0)", Kind::float8, c.tiny},
                           {"MAX(" + n + " + 0)", Kind::float8, c.tiny},
                           {"AVG(" + n + ")", Kind::other, false}});
    if (ordered)
      out.push_back({"JSONB_AGG(" + n + " ORDER BY " + order_by(r) + ")", Kind::other, false});
  }
  return out;
}

std::string field_name(int transform, size_t i) {
  return fmt::format("f{}_{}", transform, i);
}

// `from`: what the statement reads (the source's name, or the source and
// its joins); `options` goes before SELECT.
void one_to_one(Rng& rng, Transform& t, int index, const Relation& src,
                const std::vector<Column>& keys, const std::string& from = "",
                const std::string& options = "") {
  auto cols = readable(src);
  size_t n = static_cast<size_t>(uniform(rng, 1, 4));
  std::string select;
  t.target.name = t.name;
  t.target.columns = keys;
  for (const auto& k : keys) {
    t.target.order_keys.push_back(k.name);
    t.target.key.push_back(k.name);
  }
  for (size_t i = 0; i < n; ++i) {
    Expr e = pick(rng, row_exprs(pick(rng, cols)));
    select += fmt::format("{}{} AS {}", i ? ", " : "", e.sql, field_name(index, i));
    t.target.columns.push_back({field_name(index, i), e.kind, e.tiny, false});
  }
  t.statement =
      fmt::format("TRANSFORM {} FROM {}{} SELECT {}{}", t.name, from.empty() ? src.name : from,
                  options, select, where_clause(rng, src));
}

// The columns of `table` named as `alias`.col, for expressions over a join.
std::vector<Column> qualified_columns(const Table& table, const std::string& alias) {
  std::vector<Column> out = table.key;
  out.insert(out.end(), table.columns.begin(), table.columns.end());
  for (auto& c : out) c.name = alias + "." + c.name;
  return out;
}

// The ON of a to-one join of `to` (as `to_alias`) onto `from` (as
// `from_alias`): each key column of `to` (or its unique column, when it has
// one, now and then) equated with a column of `from` of
// its kind (the key's int id with an int column, its text tag with a text
// one), drawn from `from`'s columns and, less often, its key. "" when `from` has none; else
// `referencing` gets the columns of `from` it reads, in ON order.
std::string to_one_on(Rng& rng, const Table& from, const std::string& from_alias, const Table& to,
                      const std::string& to_alias, std::vector<std::string>& referencing,
                      bool& through_unique) {
  std::string on;
  referencing.clear();
  // Sometimes through the unique column instead of the primary key.
  std::vector<Column> key = to.key;
  through_unique = !to.unique_column.empty() && chance(rng, 0.4);
  if (through_unique) key = {{to.unique_column, Kind::int4}};
  for (const auto& k : key) {
    // Mostly a plain column (its values dangle, match and go NULL as the
    // writers set them), sometimes the key itself.
    std::vector<Column> same;
    bool with_key = chance(rng, 0.25);
    for (const auto* list : {&from.columns, &from.key})
      for (const auto& c : *list)
        if (c.kind == k.kind && (list == &from.columns || with_key || same.empty()))
          same.push_back(c);
    if (same.empty()) return "";
    const Column& c = pick(rng, same);
    on += fmt::format("{}{}.{} = {}.{}", on.empty() ? "" : " AND ", to_alias, k.name, from_alias,
                      c.name);
    referencing.push_back(c.name);
  }
  return on;
}

// The ON of a join of `to` (as `to_alias`) onto `from` (as `from_alias`)
// that fans out: a column of `to` outside its key equated with a column of
// `from` of its kind, mostly `from`'s key (the children of a parent row),
// else one of its columns (tiny values match many rows). "" when no kinds
// meet; else `referencing` gets the column of `from` and `own` the column of
// `to`, for their indexes.
std::string fan_out_on(Rng& rng, const Table& from, const std::string& from_alias, const Table& to,
                       const std::string& to_alias, std::vector<std::string>& referencing,
                       std::vector<std::string>& own) {
  bool by_key = chance(rng, 0.6);
  std::vector<std::pair<Column, Column>> pairs;
  for (const auto& c : to.columns) {
    // A join ON the unique column is to-one, not one that fans out.
    if (c.kind == Kind::other || c.name == to.unique_column) continue;
    for (const auto* list : {&from.key, &from.columns})
      if ((list == &from.key) == by_key)
        for (const auto& f : *list)
          if (f.kind == c.kind) pairs.push_back({c, f});
  }
  if (pairs.empty()) return "";
  auto [c, f] = pick(rng, pairs);
  referencing = {f.name};
  own = {c.name};
  return fmt::format("{}.{} = {}.{}", to_alias, c.name, from_alias, f.name);
}

// Group columns: one or two readable columns, tiny ones preferred.
std::vector<Column> group_columns(Rng& rng, const Relation& src) {
  std::vector<Column> cols;
  for (const auto& c : readable(src)) cols.push_back(c);
  std::vector<Column> tiny;
  for (const auto& c : cols)
    if (c.tiny) tiny.push_back(c);
  std::vector<Column> out;
  size_t n = chance(rng, 0.3) ? 2 : 1;
  for (int tries = 0; out.size() < n && tries < 10; ++tries) {
    const Column& c = !tiny.empty() && chance(rng, 0.85) ? pick(rng, tiny) : pick(rng, cols);
    bool dup =
        std::any_of(out.begin(), out.end(), [&](const Column& o) { return o.name == c.name; });
    if (!dup) out.push_back(c);
  }
  return out;
}

// Returns the group column names so the caller can make an index for them
// (none when the GROUP BY has expressions, which go WITHOUT SOURCE INDEX, or
// when there is no GROUP BY: a one-row aggregate).
//
// Over a join (`from`: the source and its joins, names qualified, the
// source as `a`), a joined table's column or an expression over it groups
// under a name of its own (GROUP BY b.g0 AS g1_0); `with_index` then
// stands for the joins' indexes too.
std::vector<std::string> aggregate(Rng& rng, Transform& t, int index, const Relation& src,
                                   bool with_index, const std::string& from = "") {
  auto groups = chance(rng, 0.12) ? std::vector<Column>{} : group_columns(rng, src);
  auto cols = readable(src);
  std::vector<std::string> names;
  std::string group_list;
  bool expressions = false;
  t.target.name = t.name;
  for (size_t i = 0; i < groups.size(); ++i) {
    Column g = groups[i];
    std::string item = g.name;
    auto dot = g.name.find('.');
    if (dot != std::string::npos && g.name.substr(0, dot) != "a") {
      g.name = fmt::format("g{}_{}", index, i);
      if (g.kind != Kind::other && chance(rng, 0.3)) {  // an expression over the joined table
        Expr e = pick(rng, row_exprs(groups[i]));
        item = e.sql;
        g.kind = e.kind;
        g.tiny = e.tiny;
      }
      item = fmt::format("{} AS {}", item, g.name);
    } else if (g.kind != Kind::other && chance(rng, 0.25)) {
      Expr e = pick(rng, row_exprs(g));
      g = {fmt::format("g{}_{}", index, i), e.kind, e.tiny, false};
      item = fmt::format("{} AS {}", e.sql, g.name);
      expressions = true;
    } else if (dot != std::string::npos) {
      g.name = g.name.substr(dot + 1);  // the source's own column, named by it
    }
    names.push_back(g.name);
    group_list += (group_list.empty() ? "" : ", ") + item;
    t.target.columns.push_back(g);
    t.target.order_keys.push_back(g.name);
  }
  if (expressions || groups.empty()) {
    with_index = with_index && !expressions && !from.empty();  // the joins' indexes
    names.clear();
  }
  // A joined table's group column needs no source index (none can lead with it).
  bool joined_group = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
    return n.rfind(fmt::format("g{}_", index), 0) == 0;
  });
  if (joined_group) names.clear();
  // No field at all (one time in ten with groups): a SELECT DISTINCT.
  size_t n = !groups.empty() && chance(rng, 0.1) ? 0 : static_cast<size_t>(uniform(rng, 1, 4));
  std::string select;
  for (size_t i = 0; i < n; ++i) {
    Expr e = chance(rng, 0.15) ? Expr{"COUNT(*)", Kind::int8, true}
                               : pick(rng, agg_exprs(pick(rng, cols), src));
    select += fmt::format("{}{} AS {}", i ? ", " : "", e.sql, field_name(index, i));
    t.target.columns.push_back({field_name(index, i), e.kind, e.tiny, false});
  }
  t.aggregate = true;
  std::string grouping;
  if (!groups.empty()) grouping = " GROUP BY " + group_list;
  if (!with_index && (!groups.empty() || !from.empty())) grouping += " WITHOUT SOURCE INDEX";
  t.statement =
      fmt::format("TRANSFORM {} FROM {}{}{}{}", t.name, from.empty() ? src.name : from, grouping,
                  select.empty() ? "" : " SELECT " + select, where_clause(rng, src));
  return names;
}

// A 1-1 or (`aggregate`) GROUP BY transform over `table` (as `a`) joining
// one or two tables of the schema (itself included: a self join), INNER or
// LEFT, as a star or a snowflake; a join may fan out (a 1-1 target then
// holds `<alias>_<key column>` for the joined table's key; an aggregate
// counts each match). The referencing indexes (and a group index) are added to the
// schema, or the statement goes WITHOUT SOURCE INDEX. False when no table
// can be joined.
bool joined_transform(Rng& rng, Transform& t, int index, Schema& schema, size_t table,
                      bool aggregate_it) {
  std::vector<std::pair<size_t, std::string>> scope{{table, "a"}};
  std::string from = schema.tables[table].name + " a";
  std::vector<std::pair<size_t, std::vector<std::string>>> indexes;
  std::vector<Column> fan_key;  // the target's key columns after the source's
  std::vector<std::pair<std::string, std::string>> fan_order;  // (alias, key column) of each fan
  bool keyed = true;                                           // the target has a primary key
  size_t joins = chance(rng, 0.35) ? 2 : 1;
  for (size_t j = 0; j < joins; ++j) {
    std::string alias(1, static_cast<char>('b' + j));
    size_t to = static_cast<size_t>(uniform(rng, 0, schema.tables.size() - 1));
    auto [onto, onto_alias] = pick(rng, scope);  // star or snowflake
    std::vector<std::string> referencing, own;
    bool fans = chance(rng, 0.35);
    bool through_unique = false;
    std::string on = fans ? fan_out_on(rng, schema.tables[onto], onto_alias, schema.tables[to],
                                       alias, referencing, own)
                          : to_one_on(rng, schema.tables[onto], onto_alias, schema.tables[to],
                                      alias, referencing, through_unique);
    if (on.empty()) continue;
    bool left = chance(rng, 0.5);
    from += fmt::format(" {} {} {} ON {}", left ? "LEFT JOIN" : "JOIN", schema.tables[to].name,
                        alias, on);
    indexes.push_back({onto, referencing});
    if (fans) {
      indexes.push_back({to, own});
      for (auto c : schema.tables[to].key) {
        fan_order.push_back({alias, c.name});
        c.name = alias + "_" + c.name;
        fan_key.push_back(c);
      }
      keyed = keyed && !left;  // a LEFT JOIN's fan key may be NULL: no primary key
    }
    t.joined.push_back(schema.tables[to].name);
    scope.push_back({to, alias});
  }
  if (t.joined.empty()) return false;
  // A to-one join has a row per source row: the source's key orders them;
  // a join that fans out adds its table's key (an ordered aggregate's ORDER
  // BY must be total, or its result depends on the row order).
  Relation src{schema.tables[table].name, {}, {}, {}};
  for (const auto& k : schema.tables[table].key) src.order_keys.push_back("a." + k.name);
  for (const auto& [alias, key] : fan_order) src.order_keys.push_back(alias + "." + key);
  for (const auto& [i, alias] : scope) {
    auto cols = qualified_columns(schema.tables[i], alias);
    src.columns.insert(src.columns.end(), cols.begin(), cols.end());
  }
  bool with_index = chance(rng, 0.75);
  if (with_index)
    for (auto& [i, columns] : indexes) {
      auto& list = schema.tables[i].indexes;
      if (std::find(list.begin(), list.end(), columns) == list.end()) list.push_back(columns);
    }
  t.alias = "a";
  if (aggregate_it) {
    auto groups = aggregate(rng, t, index, src, with_index, from);
    if (with_index && !groups.empty()) schema.tables[table].indexes.push_back(groups);
    return true;
  }
  std::vector<Column> keys = schema.tables[table].key;
  keys.insert(keys.end(), fan_key.begin(), fan_key.end());
  one_to_one(rng, t, index, src, keys, from, with_index ? "" : " WITHOUT SOURCE INDEX");
  if (!keyed) t.target.key.clear();
  return true;
}

Relation table_relation(const Table& table) {
  Relation r{table.name, table.key, {}, {}};
  r.columns.insert(r.columns.end(), table.columns.begin(), table.columns.end());
  for (const auto& k : table.key) {
    r.order_keys.push_back(k.name);
    r.key.push_back(k.name);
  }
  return r;
}

}  // namespace

Program random_program(Rng& rng, Schema& schema, bool hot) {
  Program p;
  p.hot = hot;
  int roots = static_cast<int>(uniform(rng, 1, 4));
  if (hot) roots = std::max(roots, 3);
  size_t hot_table = 0;
  for (int i = 0; i < roots; ++i) {
    size_t drawn = static_cast<size_t>(uniform(rng, 0, schema.tables.size() - 1));
    if (hot && i == 0) hot_table = drawn;
    Table& table = schema.tables[hot ? hot_table : drawn];
    Relation src = table_relation(table);
    Transform t;
    t.name = fmt::format("d{}", i);
    t.source = table.name;
    size_t at = hot ? hot_table : drawn;
    if (chance(rng, hot ? 0.8 : 0.55)) {
      if (!(chance(rng, 0.3) && joined_transform(rng, t, i, schema, at, true))) {
        bool with_index = chance(rng, 0.75);
        auto groups = aggregate(rng, t, i, src, with_index);
        if (!groups.empty()) table.indexes.push_back(groups);
      }
    } else if (!(chance(rng, 0.4) && joined_transform(rng, t, i, schema, at, false))) {
      one_to_one(rng, t, i, src, table.key);
    }
    p.transforms.push_back(std::move(t));
  }
  int chained = static_cast<int>(uniform(rng, 0, 2));
  for (int j = 0; j < chained; ++j) {
    int i = static_cast<int>(p.transforms.size());
    int up = static_cast<int>(uniform(rng, 0, i - 1));
    const Transform& u = p.transforms[static_cast<size_t>(up)];
    if (u.level >= 2 || readable(u.target).empty()) continue;
    if (!u.aggregate && u.target.key.empty()) continue;  // no primary key to read it by
    Transform t;
    t.name = fmt::format("d{}", i);
    t.source = u.name;
    t.upstream = up;
    t.level = u.level + 1;
    Relation src = u.target;
    if (chance(rng, 0.5)) {
      bool with_index = chance(rng, 0.5);
      auto groups = aggregate(rng, t, i, src, with_index);
      if (!groups.empty()) {
        std::string list;
        for (const auto& g : groups) list += (list.empty() ? "" : ", ") + g;
        t.prepare = fmt::format("CREATE INDEX ON {} ({})", u.name, list);
      }
    } else {
      // The key of an aggregate target is its hidden group column, which
      // is no readable column; a 1-1 target's key is its source's key.
      std::vector<Column> keys;
      if (!u.aggregate)
        for (const auto& k : u.target.order_keys)
          for (const auto& c : u.target.columns)
            if (c.name == k) keys.push_back(c);
      one_to_one(rng, t, i, src, keys);
      if (u.aggregate) t.target.order_keys.clear();
    }
    p.transforms.push_back(std::move(t));
  }
  return p;
}

std::string Program::describe() const {
  std::string out = hot ? "-- hot: every root transform reads one table\n" : "";
  for (const auto& t : transforms) {
    if (!t.prepare.empty()) out += t.prepare + ";\n";
    out += t.statement + ";\n";
  }
  return out;
}

}  // namespace trellis::gen
