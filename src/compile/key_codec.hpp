// The ring's key encoding: a source key is a text[] holding each key column's
// JSON text (to_jsonb(value) #>> '{}'). JSON rendering does not depend on the
// writer's DateStyle or TimeZone, and every key type reads back from it with a
// plain cast, so the encoding is stable across sessions and NULL-safe.
// Every function, operator and type the fragments name is qualified with
// pg_catalog: capture triggers run them as their owner under the writer's
// search_path (compile/capture.cpp).
#pragma once

#include <string>
#include <vector>

#include "catalog/definition.hpp"

namespace trellis::compile {

// One key element: the JSON text of `value`, an expression of column `c`'s
// type (a plain ::text cast for the types whose text is their JSON text).
std::string encode_key_element(const catalog::Column& c, const std::string& value);
// Whether the JSON text of a value of `type` (format_type() text) reads back
// into that type with a plain cast: built-in scalars whose JSON rendering is
// their text output, or an unambiguous literal of it (numeric, ISO dates).
bool json_text_reads_back_by_cast(const std::string& type);
// ARRAY[...] encoding the key columns of `row_alias` (a table alias in scope).
std::string encode_key(const std::vector<catalog::Column>& key, const std::string& row_alias);
// The same encoding from a jsonb row image `json_expr` (used by capture
// triggers, so a renamed column yields NULL instead of an error).
std::string encode_key_from_json(const std::vector<catalog::Column>& key,
                                 const std::string& json_expr);
// The ring bucket of the encoded key `key_expr` (an int2 in [0, buckets)):
// capture stages a key into it, and a re-derive locks the key's slot by it.
std::string key_bucket(const std::string& key_expr, int buckets);
// Element `index` (0-based) of the encoded key `array_expr`, back in column
// `c`'s type (NULL stays NULL).
std::string decode_key_element(const catalog::Column& c, const std::string& array_expr,
                               size_t index);
// Column list `(key_array[1])::type AS "col", ...` decoding `array_expr`.
std::string decode_key_columns(const std::vector<catalog::Column>& key,
                               const std::string& array_expr);
// ("c1", "c2") qualified by `alias` (or bare when alias is empty).
std::string key_tuple(const std::vector<catalog::Column>& key, const std::string& alias);
// a."c1" = b."c1" AND ...
std::string key_equal(const std::vector<catalog::Column>& key, const std::string& a,
                      const std::string& b);
// Row comparison `(alias.c1, ...) > (decoded $param)` for keyset paging.
std::string key_after(const std::vector<catalog::Column>& key, const std::string& alias,
                      const std::string& array_expr);
std::string key_at_most(const std::vector<catalog::Column>& key, const std::string& alias,
                        const std::string& array_expr);
// Whether the encoded key `array_expr` sorts after the encoded key
// `bound_expr` as the key columns order (their types and collations), as
// key_after compares a row with a bound; NULL when an element is NULL.
std::string encoded_key_after(const std::vector<catalog::Column>& key,
                              const std::string& array_expr, const std::string& bound_expr);

}  // namespace trellis::compile
