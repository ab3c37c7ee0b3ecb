// Key encoding and decoding fragments; see key_codec.hpp.
#include "compile/key_codec.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"

namespace trellis::compile {

using base::ident;
using base::join;
using base::literal;

using catalog::Column;

namespace {

// Types whose text output is exactly their JSON text: a plain cast encodes
// them as to_jsonb(v) #>> '{}' does, without building a jsonb value.
bool json_text_is_text(const std::string& type) {
  static const char* const kTypes[] = {"smallint", "integer", "bigint",           "text",
                                       "uuid",     "boolean", "character varying"};
  for (const char* t : kTypes)
    if (type == t) return true;
  return type.rfind("character varying(", 0) == 0;
}

}  // namespace

bool json_text_reads_back_by_cast(const std::string& type) {
  return json_text_is_text(type) || type == "numeric" || type.rfind("numeric(", 0) == 0 ||
         type == "date";
}

std::string encode_key_element(const Column& c, const std::string& value) {
  if (json_text_is_text(c.type)) return fmt::format("({})::pg_catalog.text", value);
  return fmt::format("(pg_catalog.to_jsonb({}) OPERATOR(pg_catalog.#>>) '{{}}'::pg_catalog.text[])",
                     value);
}

std::string encode_key(const std::vector<Column>& key, const std::string& row_alias) {
  return "ARRAY[" +
         join<Column>(key, ", ",
                      [&](const Column& c) {
                        return encode_key_element(c, row_alias + "." + ident(c.name));
                      }) +
         "]";
}

std::string key_bucket(const std::string& key_expr, int buckets) {
  return fmt::format(
      "((pg_catalog.hashtext({}::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) "
      "OPERATOR(pg_catalog.%) {})::pg_catalog.int2",
      key_expr, buckets);
}

std::string encode_key_from_json(const std::vector<Column>& key, const std::string& json_expr) {
  return "ARRAY[" +
         join<Column>(key, ", ",
                      [&](const Column& c) {
                        return fmt::format("({} OPERATOR(pg_catalog.->>) {})", json_expr,
                                           literal(c.name));
                      }) +
         "]";
}

// Arrays (an aggregate target's "__group" key) are rendered as JSON
// arrays, so they are rebuilt from it.
std::string decode_key_element(const Column& c, const std::string& array_expr, size_t index) {
  std::string elem = fmt::format("({})[{}]", array_expr, index + 1);
  if (c.type == "text[]")
    return fmt::format(
        "(SELECT array_agg(__e ORDER BY __o) FROM jsonb_array_elements_text({}::jsonb) WITH "
        "ORDINALITY __a(__e, __o))",
        elem);
  return fmt::format("({})::{}", elem, c.type);
}

std::string decode_key_columns(const std::vector<Column>& key, const std::string& array_expr) {
  std::string out;
  for (size_t i = 0; i < key.size(); ++i) {
    if (i) out += ", ";
    out += decode_key_element(key[i], array_expr, i) + " AS " + ident(key[i].name);
  }
  return out;
}

std::string key_tuple(const std::vector<Column>& key, const std::string& alias) {
  return "(" +
         join<Column>(key, ", ",
                      [&](const Column& c) {
                        return alias.empty() ? ident(c.name) : alias + "." + ident(c.name);
                      }) +
         ")";
}

std::string key_equal(const std::vector<Column>& key, const std::string& a, const std::string& b) {
  return join<Column>(key, " AND ", [&](const Column& c) {
    return fmt::format("{0}.{2} = {1}.{2}", a, b, ident(c.name));
  });
}

namespace {
// The decoded elements of `array_expr` as a row; `collated`: each under
// its column's collation, where a column reference would carry it.
std::string decoded_tuple(const std::vector<Column>& key, const std::string& array_expr,
                          bool collated = false) {
  std::string out = "(";
  for (size_t i = 0; i < key.size(); ++i) {
    if (i) out += ", ";
    out += decode_key_element(key[i], array_expr, i);
    if (collated && !key[i].collation.empty()) out += " COLLATE " + key[i].collation;
  }
  return out + ")";
}
}  // namespace

std::string key_after(const std::vector<Column>& key, const std::string& alias,
                      const std::string& array_expr) {
  return key_tuple(key, alias) + " > " + decoded_tuple(key, array_expr);
}

std::string key_at_most(const std::vector<Column>& key, const std::string& alias,
                        const std::string& array_expr) {
  return key_tuple(key, alias) + " <= " + decoded_tuple(key, array_expr);
}

std::string encoded_key_after(const std::vector<Column>& key, const std::string& array_expr,
                              const std::string& bound_expr) {
  return decoded_tuple(key, array_expr, /*collated=*/true) + " > " + decoded_tuple(key, bound_expr);
}

}  // namespace trellis::compile
