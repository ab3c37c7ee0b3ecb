// Key encoding and decoding fragments; see key_codec.hpp.
#include "compile/key_codec.hpp"

#include <fmt/format.h>

#include "compile/sql_text.hpp"

namespace trellis::compile {

using catalog::Column;

std::string encode_key(const std::vector<Column>& key, const std::string& row_alias) {
  return "ARRAY[" +
         join<Column>(key, ", ",
                      [&](const Column& c) {
                        return fmt::format("(to_jsonb({}.{}) #>> '{{}}')", row_alias,
                                           ident(c.name));
                      }) +
         "]";
}

std::string encode_key_from_json(const std::vector<Column>& key, const std::string& json_expr) {
  return "ARRAY[" +
         join<Column>(key, ", ",
                      [&](const Column& c) {
                        return fmt::format("({} ->> {})", json_expr, literal(c.name));
                      }) +
         "]";
}

std::string decode_key_columns(const std::vector<Column>& key, const std::string& array_expr) {
  std::string out;
  for (size_t i = 0; i < key.size(); ++i) {
    if (i) out += ", ";
    out += fmt::format("(({})[{}])::{} AS {}", array_expr, i + 1, key[i].type, ident(key[i].name));
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
std::string decoded_tuple(const std::vector<Column>& key, const std::string& array_expr) {
  std::string out = "(";
  for (size_t i = 0; i < key.size(); ++i) {
    if (i) out += ", ";
    out += fmt::format("(({})[{}])::{}", array_expr, i + 1, key[i].type);
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

}  // namespace trellis::compile
