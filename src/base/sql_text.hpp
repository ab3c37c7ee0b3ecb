// Small helpers for rendering SQL text: identifier and literal quoting and
// comma-joined lists. Every identifier Trellis renders goes through ident().
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace trellis::base {

// "name" with embedded quotes doubled; always quoted, so case and keywords are safe.
std::string ident(std::string_view name);
// schema.table, both quoted.
std::string qualified(std::string_view schema, std::string_view table);
// 'text' for standard_conforming_strings = on.
std::string literal(std::string_view text);

// Joins f(item) for every item with `sep`.
template <typename T>
std::string join(const std::vector<T>& items, std::string_view sep,
                 const std::function<std::string(const T&)>& f) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += f(items[i]);
  }
  return out;
}

}  // namespace trellis::base
