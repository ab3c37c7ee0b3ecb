// Random schemas and awkward values; see random_schema.hpp.
#include "generative/random_schema.hpp"

#include <fmt/format.h>

namespace trellis::gen {

int64_t uniform(Rng& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

bool chance(Rng& rng, double p) {
  return std::bernoulli_distribution(p)(rng);
}

const char* sql_type(Kind kind) {
  switch (kind) {
    case Kind::int4:
      return "int";
    case Kind::int8:
      return "bigint";
    case Kind::numeric:
      return "numeric";
    case Kind::text:
      return "text";
    case Kind::boolean:
      return "boolean";
    case Kind::float8:
      return "double precision";
    case Kind::other:
      break;
  }
  return "jsonb";
}

namespace {

const std::vector<Kind> kColumnKinds = {Kind::int4, Kind::int8,    Kind::numeric,
                                        Kind::text, Kind::boolean, Kind::float8};

// Each domain lists plain values; extremes and oddities come with their own
// weight through repetition of the ordinary ones.
const std::vector<std::string> kInt4Tiny = {"0", "1", "2", "-2147483648"};
const std::vector<std::string> kInt4Odd = {"-2147483648", "2147483647", "0", "-1"};
const std::vector<std::string> kInt8Tiny = {"0", "7", "9223372036854775807"};
const std::vector<std::string> kInt8Odd = {"-9223372036854775808", "9223372036854775807", "0",
                                           "4294967296"};
// 1, 1.0 and 1.00 are one group; -0 and 0 too.
const std::vector<std::string> kNumericTiny = {"1", "1.0", "1.00", "2.5", "-0"};
const std::vector<std::string> kNumericOdd = {"99999999999999999999.99999",
                                              "-99999999999999999999.99999",
                                              "0.000000001",
                                              "1e20",
                                              "-0.0",
                                              "1.000"};
const std::vector<std::string> kTextTiny = {"''", "'a'", "'A'", "' '"};
const std::vector<std::string> kTextWide = {"''",
                                            "' '",
                                            "'a'",
                                            "'A'",
                                            "'abc'",
                                            "'it''s'",
                                            "E'back\\\\sl'",
                                            "'héllo ✓'",
                                            "'🎉'",
                                            "'NULL'",
                                            "'two' || chr(10) || 'lines'",
                                            "'ß'",
                                            "repeat('y', 2500)",
                                            "'zz'"};
const std::vector<std::string> kFloatTiny = {"0", "'-0'", "0.5"};
const std::vector<std::string> kFloatOdd = {"'-0'", "'Infinity'", "'-Infinity'", "'NaN'"};
const std::vector<std::string> kTags = {"''", "'a'", "'it''s'", "'ß'"};

std::string quarter(Rng& rng) {
  // Exact binary fractions, so float sums do not depend on the row order.
  int64_t q = uniform(rng, -4000, 4000);
  return fmt::format("{}", static_cast<double>(q) / 4.0);
}

Table random_table(Rng& rng, int index) {
  Table t;
  t.name = fmt::format("s{}", index);
  t.key.push_back({"id", Kind::int4, false, true});
  if (chance(rng, 0.3)) t.key.push_back({"tag", Kind::text, true, true});
  t.key_space = static_cast<int>(uniform(rng, 8, 60));
  int n = static_cast<int>(uniform(rng, 2, 5));
  for (int i = 0; i < n; ++i) {
    Column c;
    c.kind = pick(rng, kColumnKinds);
    c.tiny = (i == 0 || chance(rng, 0.4));
    c.not_null = chance(rng, 0.15);
    c.name = fmt::format("{}{}", c.tiny ? "g" : "v", i);
    t.columns.push_back(c);
  }
  if (chance(rng, 0.35)) {
    Column u;
    u.name = std::string(1, 'u');
    u.not_null = true;
    t.unique_column = u.name;
    t.columns.push_back(std::move(u));
  }
  return t;
}

}  // namespace

std::string random_value(Rng& rng, Kind kind, bool tiny, bool nullable) {
  if (nullable && chance(rng, tiny ? 0.2 : 0.12)) return "NULL";
  switch (kind) {
    case Kind::int4:
      if (tiny) return pick(rng, kInt4Tiny);
      if (chance(rng, 0.1)) return pick(rng, kInt4Odd);
      return std::to_string(uniform(rng, -100, 100));
    case Kind::int8:
      if (tiny) return pick(rng, kInt8Tiny);
      if (chance(rng, 0.1)) return pick(rng, kInt8Odd);
      return std::to_string(uniform(rng, -100000, 100000));
    case Kind::numeric:
      if (tiny) return pick(rng, kNumericTiny);
      if (chance(rng, 0.12)) return pick(rng, kNumericOdd);
      return fmt::format("{}.{:02}", uniform(rng, -999, 999), uniform(rng, 0, 99));
    case Kind::text:
      return tiny ? pick(rng, kTextTiny) : pick(rng, kTextWide);
    case Kind::boolean:
      return chance(rng, 0.5) ? "true" : "false";
    case Kind::float8:
      if (tiny) return pick(rng, kFloatTiny);
      if (chance(rng, 0.06)) return pick(rng, kFloatOdd);
      return quarter(rng);
    case Kind::other:
      break;
  }
  return "NULL";
}

std::string random_key_value(Rng& rng, const Table& table, const Column& key) {
  if (key.kind == Kind::text) return pick(rng, kTags);
  if (chance(rng, 0.03)) return pick(rng, kInt4Odd);
  return std::to_string(uniform(rng, 1, table.key_space));
}

std::string random_row(Rng& rng, const Table& table) {
  std::string out = "(";
  for (const auto& k : table.key) out += random_key_value(rng, table, k) + ", ";
  for (size_t i = 0; i < table.columns.size(); ++i) {
    const auto& c = table.columns[i];
    out += random_value(rng, c.kind, c.tiny, !c.not_null);
    out += i + 1 < table.columns.size() ? ", " : ")";
  }
  return out;
}

std::vector<std::string> initial_rows(Rng& rng, const Table& table) {
  int rows = static_cast<int>(uniform(rng, 0, table.key_space));
  std::vector<std::string> out;
  for (int i = 0; i < rows; ++i) out.push_back(random_row(rng, table));
  return out;
}

std::string insert_rows(const Table& table, const std::vector<std::string>& rows) {
  if (rows.empty()) return "";
  std::string out = fmt::format("INSERT INTO {} VALUES ", table.name);
  for (size_t i = 0; i < rows.size(); ++i) out += (i ? ", " : "") + rows[i];
  return out + " ON CONFLICT DO NOTHING;\n";
}

std::string Schema::ddl() const {
  std::string out;
  for (const auto& t : tables) {
    out += fmt::format("CREATE TABLE {} (", t.name);
    for (const auto& c : t.key) out += fmt::format("{} {} NOT NULL, ", c.name, sql_type(c.kind));
    for (const auto& c : t.columns)
      out += fmt::format("{} {}{}, ", c.name, sql_type(c.kind), c.not_null ? " NOT NULL" : "");
    out += "PRIMARY KEY (";
    for (size_t i = 0; i < t.key.size(); ++i) out += (i ? ", " : "") + t.key[i].name;
    out += t.partitions > 0 ? ")) PARTITION BY HASH (id);\n" : "));\n";
    for (int i = 0; i < t.partitions; ++i)
      out += fmt::format(
          "CREATE TABLE {} PARTITION OF {} FOR VALUES WITH (MODULUS {}, REMAINDER {});\n",
          t.partition(i), t.name, t.partitions, i);
    if (!t.unique_column.empty())
      out += fmt::format("CREATE UNIQUE INDEX ON {} ({});\n", t.name, t.unique_column);
    for (const auto& idx : t.indexes) {
      out += fmt::format("CREATE INDEX ON {} (", t.name);
      for (size_t i = 0; i < idx.size(); ++i) out += (i ? ", " : "") + idx[i];
      out += ");\n";
    }
  }
  return out;
}

Schema random_schema(Rng& rng) {
  Schema s;
  int n = static_cast<int>(uniform(rng, 1, 3));
  for (int i = 0; i < n; ++i) s.tables.push_back(random_table(rng, i));
  return s;
}

}  // namespace trellis::gen
