// Comparing an existing table with the target define would create; see
// adoption.hpp. The choices (README, "Adopting an existing table"): a
// difference in what the transform writes (a column, its type, collation,
// nullability, the key) is refused; Trellis's hidden columns ("__" names)
// and the keys and indexes over them are added; columns the transform does
// not write are kept when an INSERT that leaves them out still fills them;
// indexes, CHECK constraints and AFTER triggers are kept (a row a CHECK or
// a trigger refuses is held in quarantine, as for any target); a unique
// index that is not implied by the key, an exclusion constraint, a foreign
// key from or to the table and a BEFORE row trigger could refuse or change
// Trellis's writes (or, for a foreign key, the application's), and are
// refused.
#include "bind/adoption.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/sql_text.hpp"
#include "bind/refusal.hpp"
#include "bind/table_shape.hpp"

namespace trellis::bind {

namespace {

constexpr long kCountedRows = 1000;

bool hidden(const std::string& column) {
  return column.rfind("__", 0) == 0;
}

bool any_hidden(const ShapeIndex& ix) {
  return std::any_of(ix.columns.begin(), ix.columns.end(), hidden);
}

std::string quoted_list(const TableShape& t, const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    const auto* c = t.find(n);
    out += (out.empty() ? "" : ", ") + (c ? c->quoted : base::ident(n));
  }
  return "(" + out + ")";
}

std::string type_ddl(const catalog::Column& c) {
  return c.collation.empty() ? c.type : c.type + " COLLATE " + c.collation;
}

bool same_index(const ShapeIndex& a, const ShapeIndex& b) {
  return a.columns == b.columns && a.unique == b.unique && a.primary == b.primary &&
         (!a.unique || a.nulls_not_distinct == b.nulls_not_distinct) && !b.partial &&
         !b.expressions;
}

// Leaves the comparison's findings in `problems` (refused), `kept` and
// `added` (for the note) and the additions.
struct Comparison {
  Comparison(const TableShape& h, const TableShape& w, bool single)
      : have(h), want(w), one_row(single) {}

  const TableShape& have;
  const TableShape& want;
  bool one_row = false;  // an aggregate without GROUP BY: no two rows to conflict
  std::vector<std::string> problems;
  std::vector<std::string> kept;
  std::vector<std::string> added;
  std::set<std::string> matched;  // indexes of `have` that are define's
  Adoption out;

  std::string alter() const { return "ALTER TABLE " + have.quoted; }

  void table() {
    if (have.inherits)
      problems.push_back(fmt::format(
          "table {} is part of a table inheritance hierarchy, whose other tables' rows would be "
          "read as the target's; adopt a table without parents or children",
          have.quoted));
    if (!have.owned)
      problems.push_back(
          fmt::format("role {} does not own table {} (its owner is {}), and adopting "
                      "it adds to it: {} OWNER TO {}",
                      have.role_quoted, have.quoted, have.owner_quoted, alter(), have.role_quoted));
    if (have.forced_rls)
      problems.push_back(
          fmt::format("table {} forces row-level security on its owner, which "
                      "would filter Trellis's writes: {} NO FORCE ROW LEVEL SECURITY",
                      have.quoted, alter()));
  }

  void column(const ShapeColumn& w) {
    const ShapeColumn* h = have.find(w.column.name);
    std::string name = w.column.name;
    if (!h) {
      if (hidden(name)) {
        out.additions.columns.push_back({w.column, w.not_null, w.default_sql});
        out.added_columns.push_back(name);
        return;
      }
      problems.push_back(fmt::format(
          "table {} has no column \"{}\"; the transform writes it: {} "
          "ADD COLUMN {} {}{}",
          have.quoted, name, alter(), w.quoted, type_ddl(w.column), w.not_null ? " NOT NULL" : ""));
      return;
    }
    std::string at = fmt::format("column \"{}\" of table {}", name, have.quoted);
    std::string fix = fmt::format("{} ALTER COLUMN {}", alter(), h->quoted);
    if (h->column.type != w.column.type)
      problems.push_back(fmt::format("{} has type {}; the transform writes {}: {} TYPE {}", at,
                                     h->column.type, w.column.type, fix, type_ddl(w.column)));
    else if (h->column.collation != w.column.collation)
      problems.push_back(fmt::format(
          "{} has collation {}; the transform writes {}: {} TYPE {}", at,
          h->column.collation.empty() ? "the type's default" : h->column.collation,
          w.column.collation.empty() ? "the type's default collation" : w.column.collation, fix,
          type_ddl(w.column)));
    if (h->not_null && !w.not_null)
      problems.push_back(
          fmt::format("{} is NOT NULL; the transform may write NULL there: {} DROP "
                      "NOT NULL",
                      at, fix));
    if (!h->not_null && w.not_null)
      problems.push_back(
          fmt::format("{} is nullable; the transform's key column is NOT NULL: {} "
                      "SET NOT NULL",
                      at, fix));
    if (h->generated)
      problems.push_back(
          fmt::format("{} is a generated column; the transform writes it: {} DROP "
                      "EXPRESSION",
                      at, fix));
    if (h->identity == 'a')
      problems.push_back(
          fmt::format("{} is GENERATED ALWAYS AS IDENTITY; the transform writes it: "
                      "{} DROP IDENTITY",
                      at, fix));
  }

  void extra_column(const ShapeColumn& h) {
    if (want.find(h.column.name)) return;
    if (h.not_null && !h.fills_itself()) {
      problems.push_back(fmt::format(
          "column \"{}\" of table {} is NOT NULL without a default, and the transform does not "
          "write it, so every row it inserts would be refused: {} ALTER COLUMN {} DROP NOT NULL, "
          "or give it a default ({} ALTER COLUMN {} SET DEFAULT ...)",
          h.column.name, have.quoted, alter(), h.quoted, alter(), h.quoted));
      return;
    }
    kept.push_back(fmt::format("column \"{}\"", h.column.name));
  }

  const ShapeIndex* find_same(const ShapeIndex& w) const {
    for (const auto& h : have.indexes)
      if (same_index(w, h)) return &h;
    return nullptr;
  }

  // An index that leads with w's columns serves w's lookups as well.
  const ShapeIndex* find_leading(const ShapeIndex& w) const {
    for (const auto& h : have.indexes)
      if (!h.partial && h.columns.size() >= w.columns.size() &&
          std::equal(w.columns.begin(), w.columns.end(), h.columns.begin()))
        return &h;
    return nullptr;
  }

  std::string drop_fix(const ShapeIndex& h) const {
    return h.constraint.empty() ? "DROP INDEX " + h.quoted
                                : fmt::format("{} DROP CONSTRAINT {}", alter(), h.constraint);
  }

  void add(const ShapeIndex& w) {
    out.additions.indexes.push_back({w.columns, w.primary, w.unique, w.nulls_not_distinct});
    std::string cols = quoted_list(want, w.columns);
    added.push_back(
        w.primary ? "primary key " + cols
        : w.unique
            ? fmt::format("UNIQUE {}{}", w.nulls_not_distinct ? "NULLS NOT DISTINCT " : "", cols)
            : "index on " + cols);
  }

  void index(const ShapeIndex& w) {
    if (const auto* h = find_same(w)) {
      matched.insert(h->quoted);
      return;
    }
    if (!w.unique) {
      if (const auto* h = find_leading(w))
        matched.insert(h->quoted);
      else
        add(w);
      return;
    }
    const ShapeIndex* pk = have.primary_key();
    std::string cols = quoted_list(want, w.columns);
    if (any_hidden(w)) {
      if (w.primary && pk) {
        matched.insert(pk->quoted);
        problems.push_back(fmt::format(
            "table {} has primary key {}; the transform's rows are keyed by Trellis's hidden "
            "column {}, which adoption adds as the primary key: {}",
            have.quoted, quoted_list(have, pk->columns), cols, drop_fix(*pk)));
        return;
      }
      add(w);
      return;
    }
    if (w.primary) {
      if (pk) {
        matched.insert(pk->quoted);
        problems.push_back(
            fmt::format("table {} has primary key {}; the transform keys its rows "
                        "by {}: {}, ADD PRIMARY KEY {}",
                        have.quoted, quoted_list(have, pk->columns), cols, drop_fix(*pk), cols));
      } else {
        problems.push_back(
            fmt::format("table {} has no primary key; the transform keys its rows "
                        "by {}: {} ADD PRIMARY KEY {}",
                        have.quoted, cols, alter(), cols));
      }
      return;
    }
    problems.push_back(fmt::format(
        "table {} has no UNIQUE NULLS NOT DISTINCT key on {}; the transform keys its rows by "
        "them, NULL being a value of its own: {} ADD UNIQUE NULLS NOT DISTINCT {}",
        have.quoted, cols, alter(), cols));
  }

  // A unique index holds whatever the transform writes when its columns
  // include one of the target's keys (whose values never repeat).
  bool implied_by_key(const ShapeIndex& h) const {
    if (h.partial || h.expressions) return false;
    if (one_row) return true;
    for (const auto& w : want.indexes) {
      if (!w.unique || any_hidden(w)) continue;
      if (std::all_of(w.columns.begin(), w.columns.end(), [&](const std::string& c) {
            return std::find(h.columns.begin(), h.columns.end(), c) != h.columns.end();
          }))
        return true;
    }
    return false;
  }

  void extra_index(const ShapeIndex& h) {
    if (matched.count(h.quoted)) return;
    // An exclusion constraint's index: refused with its constraint.
    if (!h.unique && !h.constraint.empty()) return;
    if (h.unique && !implied_by_key(h)) {
      problems.push_back(fmt::format(
          "unique index {} of table {} on {} is not implied by the transform's key, so it could "
          "refuse rows the transform writes: {}",
          h.quoted, have.quoted, quoted_list(have, h.columns), drop_fix(h)));
      return;
    }
    kept.push_back(fmt::format("{}index {}", h.unique ? "unique " : "", h.quoted));
  }

  void constraint(const ShapeConstraint& c) {
    if (c.kind == 'c') {
      kept.push_back(
          fmt::format("CHECK constraint {} (a row it refuses is held in quarantine)", c.quoted));
    } else if (c.kind == 'x') {
      problems.push_back(
          fmt::format("exclusion constraint {} of table {} could refuse rows the "
                      "transform writes: {} DROP CONSTRAINT {}",
                      c.quoted, have.quoted, alter(), c.quoted));
    } else if (c.on_table) {
      problems.push_back(fmt::format(
          "foreign key {} of table {} ({}) could refuse the transform's writes, which follow the "
          "sources later and in their own order, and make writes to the table it references "
          "wait for or fail on them: {} DROP CONSTRAINT {}",
          c.quoted, have.quoted, c.definition, alter(), c.quoted));
    } else {
      problems.push_back(fmt::format(
          "foreign key {} of table {} references table {}, whose rows the transform deletes and "
          "rewrites as the sources change, which that key could refuse: ALTER TABLE {} DROP "
          "CONSTRAINT {}",
          c.quoted, c.table, have.quoted, c.table, c.quoted));
    }
  }

  void trigger(const ShapeTrigger& t) {
    if (t.before_row)
      problems.push_back(
          fmt::format("trigger {} on table {} runs before each row and could change "
                      "or skip the rows the transform writes: DROP TRIGGER {} ON {}",
                      t.quoted, have.quoted, t.quoted, have.quoted));
    else
      kept.push_back(fmt::format("trigger {} (it fires on Trellis's writes)", t.quoted));
  }

  void run() {
    table();
    for (const auto& w : want.columns) column(w);
    for (const auto& h : have.columns) extra_column(h);
    for (const auto& w : want.indexes) index(w);
    for (const auto& h : have.indexes) extra_index(h);
    for (const auto& c : have.constraints) constraint(c);
    for (const auto& t : have.triggers) trigger(t);
  }

  std::string note() const {
    std::string text = fmt::format("adopted table {}", have.quoted);
    if (!kept.empty())
      text += fmt::format("; kept beside what the transform writes: {}", fmt::join(kept, ", "));
    std::vector<std::string> all;
    if (!out.added_columns.empty()) {
      std::vector<std::string> names;
      for (const auto& c : out.added_columns) names.push_back("\"" + c + "\"");
      all.push_back(
          fmt::format("hidden column{} {}", names.size() > 1 ? "s" : "", fmt::join(names, ", ")));
    }
    all.insert(all.end(), added.begin(), added.end());
    if (!all.empty()) text += fmt::format("; added Trellis's {}", fmt::join(all, ", "));
    if (!out.added_columns.empty())
      text += " (DROP TRANSFORM removes the hidden columns and leaves the table)";
    return text;
  }
};

TableShape probe(pg::Connection& conn, const catalog::TransformDef& def,
                 const std::vector<std::string>& probe_ddl) {
  pg::Savepoint sp(conn, "trellis_adoption_probe");
  for (const auto& ddl : probe_ddl) conn.exec(ddl);
  auto shape = describe_shape(conn, base::qualified("pg_temp", def.target_table));
  sp.rollback();
  if (!shape)
    throw Error(ErrorCode::internal,
                fmt::format("the probe of {}'s target left no table", def.target_name()));
  return *shape;
}

}  // namespace

Adoption plan_adoption(pg::Connection& conn, const catalog::TransformDef& def,
                       const std::vector<std::string>& probe_ddl) {
  std::string table = base::qualified(def.target_schema, def.target_table);
  auto have = describe_shape(conn, table);
  if (!have)
    refuse(ErrorCode::not_found,
           fmt::format("table {} does not exist; create it first, or drop ADOPT EXISTING TABLE to "
                       "let Trellis create it",
                       def.target_name()));
  if (long rows = count_rows_up_to(conn, table, kCountedRows); rows > 0)
    refuse(
        ErrorCode::validation,
        fmt::format("table {} is not empty (it holds {}{} row{}); ADOPT EXISTING TABLE adopts an "
                    "empty table, which Trellis then fills from the sources: TRUNCATE {}, or "
                    "drop ADOPT EXISTING TABLE and pick another target name",
                    have->quoted, rows >= kCountedRows ? "at least " : "", rows,
                    rows == 1 ? "" : "s", have->quoted));
  TableShape want = probe(conn, def, probe_ddl);
  Comparison cmp(*have, want, def.single_group());
  cmp.run();
  if (!cmp.problems.empty())
    refuse(ErrorCode::validation, fmt::format("table {} cannot be adopted: {}", have->quoted,
                                              fmt::join(cmp.problems, "; ")));
  cmp.out.note = cmp.note();
  return cmp.out;
}

}  // namespace trellis::bind
