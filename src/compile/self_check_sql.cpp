// Self-check SQL; see self_check_sql.hpp. Rows of the two sides are
// matched by their key as a jsonb object (a hash join; NULL group values
// match each other, numerics match by value), and each compared column
// yields one `cell` difference when its values differ.
#include "compile/self_check_sql.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "compile/aggregate.hpp"
#include "compile/aggregate_state.hpp"
#include "compile/key_codec.hpp"
#include "compile/oracle.hpp"
#include "compile/transform_sql.hpp"

namespace trellis::compile {

using base::ident;
using base::join;
using base::literal;
using base::qualified;

using catalog::Column;
using catalog::Field;
using catalog::TransformDef;

namespace {

constexpr const char* kLo = "$1::text[]";
constexpr const char* kHi = "$2::text[]";

// A compared column: its name and how one of its values is compared.
struct Compared {
  std::string name;
  std::optional<Field> field;  // a field (compared as the oracle does); else jsonb
};

std::string compared(const TransformDef& d, const Compared& c, const std::string& value) {
  return c.field ? compared_value(d, *c.field, value) : "to_jsonb(" + value + ")";
}

bool is_aggregate(const TransformDef& d) {
  return d.shape == catalog::Shape::aggregate;
}

// The columns pages are ranges of.
std::vector<Column> page_key(const TransformDef& d) {
  return is_aggregate(d) ? d.group : d.key;
}

std::vector<std::string> key_columns(const TransformDef& d) {
  std::vector<std::string> out;
  if (is_aggregate(d)) {
    for (const auto& g : d.group) out.push_back(g.name);
    return out;
  }
  for (const auto& k : d.key) out.push_back(k.name);
  for (const auto& f : d.fan_key()) out.push_back(f.column.name);
  return out;
}

std::vector<Compared> compared_columns(const TransformDef& d,
                                       const std::set<std::string>& present) {
  std::vector<Compared> out;
  if (!is_aggregate(d))
    for (const auto& h : d.held_key()) out.push_back({h.column.name, std::nullopt});
  for (const auto& f : d.fields)
    if (!d.paused(f.name)) out.push_back({f.name, f});
  for (const auto& s : state_columns(d)) out.push_back({s, std::nullopt});
  std::vector<Compared> kept;
  for (auto& c : out)
    if (present.count(c.name)) kept.push_back(std::move(c));
  return kept;
}

std::string column_of(const std::string& alias, const Column& c) {
  return alias + "." + ident(c.name);
}

// Keys past `array` in the page key's order with NULLs last: some column
// is greater (or NULL where the bound's is not) and every one before it
// equal (NULL equal to NULL). Always true or false, never NULL.
std::string after_nullable(const std::vector<Column>& key, const std::string& alias,
                           const std::string& array) {
  std::vector<std::string> terms;
  for (size_t i = 0; i < key.size(); ++i) {
    std::vector<std::string> parts;
    for (size_t j = 0; j < i; ++j)
      parts.push_back(fmt::format("{} IS NOT DISTINCT FROM {}", column_of(alias, key[j]),
                                  decode_key_element(key[j], array, j)));
    std::string bound = decode_key_element(key[i], array, i);
    std::string x = column_of(alias, key[i]);
    parts.push_back(fmt::format("({0} IS NOT NULL AND ({1} > {0} OR {1} IS NULL))", bound, x));
    terms.push_back("(" + fmt::format("{}", fmt::join(parts, " AND ")) + ")");
  }
  return "(" + fmt::format("{}", fmt::join(terms, " OR ")) + ")";
}

// Rows of `alias` in the page ($1, $2]. Source keys are never NULL: row
// comparisons, which an index range serves. Group columns may be: the
// exact NULL-aware test, plus bounds of the leading column that an index
// range serves once the planner folds the page's bounds in.
std::string in_page(const TransformDef& d, const std::string& alias) {
  auto key = page_key(d);
  if (key.empty()) return fmt::format("({} IS NULL OR {} IS NULL OR true)", kLo, kHi);  // one page
  if (!is_aggregate(d))
    return fmt::format("({0} IS NULL OR {1}) AND ({2} IS NULL OR {3})", kLo,
                       key_after(key, alias, kLo), kHi, key_at_most(key, alias, kHi));
  std::string x = column_of(alias, key[0]);
  std::string lo1 = decode_key_element(key[0], kLo, 0);
  std::string hi1 = decode_key_element(key[0], kHi, 0);
  return fmt::format(
      "({0} IS NULL OR {1}) AND ({2} IS NULL OR NOT {3}) AND ({0} IS NULL OR {4} IS NULL OR {5} "
      ">= {4} OR (({2} IS NULL OR {6} IS NULL) AND {5} IS NULL)) AND ({2} IS NULL OR {6} IS "
      "NULL OR {5} <= {6})",
      kLo, after_nullable(key, alias, kLo), kHi, after_nullable(key, alias, kHi), lo1, x, hi1);
}

// The encoded page key `rows` keys past $1 in `from` (rows under alias
// __r), with the key columns beside it for ordering.
std::string nth_key(const TransformDef& d, const std::string& from) {
  auto key = page_key(d);
  std::string cols = join<Column>(key, ", ", [](const Column& c) { return column_of("__r", c); });
  std::string after =
      is_aggregate(d) ? after_nullable(key, "__r", kLo) : key_after(key, "__r", kLo);
  return fmt::format(
      "(SELECT {} AS __k FROM {} WHERE {} IS NULL OR {} ORDER BY {} OFFSET $2::int - 1 LIMIT 1)",
      encode_key(key, "__r"), from, kLo, after, cols);
}

std::string page_bound(const TransformDef& d) {
  auto key = page_key(d);
  if (key.empty()) return fmt::format("SELECT {} WHERE $2::int IS NULL AND false", kLo);
  std::string target = qualified(d.target_schema, d.target_table) + " __r";
  std::string source = is_aggregate(d) ? "(" + group_rows(d) + ") __r"
                                       : qualified(d.source_schema, d.source_table) + " __r";
  std::vector<std::string> order;
  for (size_t i = 0; i < key.size(); ++i) order.push_back(decode_key_element(key[i], "__b.__k", i));
  return fmt::format("SELECT __b.__k FROM ({} UNION ALL {}) __b ORDER BY {} LIMIT 1",
                     nth_key(d, target), nth_key(d, source), fmt::join(order, ", "));
}

std::string key_object(const std::vector<std::string>& key, const std::string& alias) {
  return "jsonb_build_object(" +
         join<std::string>(
             key, ", ",
             [&](const std::string& k) { return literal(k) + ", " + alias + "." + ident(k); }) +
         ")";
}

// One side of a page: the key object and the compared columns (__v<i>).
std::string side(const TransformDef& d, const std::vector<std::string>& key,
                 const std::vector<Compared>& cols, const std::string& from,
                 const std::string& alias) {
  // The target row's version: a row a drain rewrote between two checks
  // differs by it (self_check_runner keeps only differences found alike).
  std::string values = alias == "__t" ? ", __t.xmin::text AS __x" : ", NULL::text AS __x";
  for (size_t i = 0; i < cols.size(); ++i)
    values += fmt::format(", {}.{} AS __v{}", alias, ident(cols[i].name), i);
  return fmt::format("SELECT {} AS __k{} FROM {} {} WHERE {}", key_object(key, alias), values, from,
                     alias, in_page(d, alias));
}

std::string compare(const TransformDef& d, const std::vector<std::string>& key,
                    const std::vector<Compared>& cols) {
  std::string recompute =
      is_aggregate(d) ? recompute_with_state(d) : compile_transform(d).oracle_select;
  std::string pairs;
  for (size_t i = 0; i < cols.size(); ++i)
    pairs += fmt::format(", __t.__v{0} AS __t{0}, __o.__v{0} AS __o{0}", i);
  std::string rows = fmt::format(
      "SELECT CASE WHEN __tk IS NULL THEN 'missing_row' ELSE 'extra_row' END AS kind, "
      "coalesce(__tk, __ok)::text AS key, NULL::text AS col, NULL::text AS persisted, NULL::text "
      "AS recomputed, __tx AS xmin FROM __j WHERE __tk IS NULL OR __ok IS NULL");
  if (!cols.empty()) {
    std::vector<std::string> cells;
    for (size_t i = 0; i < cols.size(); ++i) {
      std::string t = fmt::format("__j.__t{}", i), o = fmt::format("__j.__o{}", i);
      cells.push_back(fmt::format("({}, {}::text, {}::text, {} IS DISTINCT FROM {})",
                                  literal(cols[i].name), t, o, compared(d, cols[i], t),
                                  compared(d, cols[i], o)));
    }
    rows += fmt::format(
        " UNION ALL SELECT 'cell', __tk::text, __c.col, __c.p, __c.r, __tx FROM __j CROSS JOIN "
        "LATERAL "
        "(VALUES {}) __c(col, p, r, differs) WHERE __tk IS NOT NULL AND __ok IS NOT NULL AND "
        "__c.differs",
        fmt::join(cells, ", "));
  }
  return fmt::format(
      "WITH __t AS ({}), __o AS ({}), __j AS MATERIALIZED (SELECT __t.__k AS __tk, __o.__k AS "
      "__ok, __t.__x AS __tx{} FROM __t FULL JOIN __o ON __t.__k = __o.__k) SELECT 'rows', "
      "NULL::text, NULL::text, NULL::text, NULL::text, count(*), NULL::text FROM __j UNION ALL "
      "(SELECT kind, key, col, persisted, recomputed, 0, xmin FROM ({}) __d ORDER BY key, col "
      "NULLS FIRST LIMIT $3)",
      side(d, key, cols, qualified(d.target_schema, d.target_table), "__t"),
      side(d, key, cols, "(" + recompute + ")", "__o"), pairs, rows);
}

}  // namespace

SelfCheckSql compile_self_check(const TransformDef& d, const std::set<std::string>& present) {
  SelfCheckSql sql;
  sql.key_columns = key_columns(d);
  sql.expected_columns = sql.key_columns;
  if (is_aggregate(d)) sql.expected_columns.push_back("__group");
  if (!is_aggregate(d))
    for (const auto& h : d.held_key()) sql.expected_columns.push_back(h.column.name);
  for (const auto& f : d.fields) sql.expected_columns.push_back(f.name);
  for (const auto& s : state_columns(d)) sql.expected_columns.push_back(s);
  auto cols = compared_columns(d, present);
  sql.page_bound = page_bound(d);
  sql.compare = compare(d, sql.key_columns, cols);
  return sql;
}

}  // namespace trellis::compile
