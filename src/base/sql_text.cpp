// Quoting helpers; see sql_text.hpp.
#include "base/sql_text.hpp"

namespace trellis::base {

namespace {
std::string quote_with(std::string_view text, char q) {
  std::string out(1, q);
  for (char c : text) {
    if (c == q) out += q;
    out += c;
  }
  out += q;
  return out;
}
}  // namespace

std::string ident(std::string_view name) {
  return quote_with(name, '"');
}
std::string qualified(std::string_view schema, std::string_view table) {
  return ident(schema) + "." + ident(table);
}
std::string literal(std::string_view text) {
  return quote_with(text, '\'');
}

}  // namespace trellis::base
