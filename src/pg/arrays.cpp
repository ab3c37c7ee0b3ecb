// Integer array text forms; see arrays.hpp.
#include "pg/arrays.hpp"

#include <cstdlib>

namespace trellis::pg {

std::set<int> parse_int_array(const std::string& text) {
  std::set<int> out;
  const char* p = text.c_str();
  while (*p) {
    if ((*p >= '0' && *p <= '9') || *p == '-') {
      char* end = nullptr;
      out.insert(static_cast<int>(std::strtol(p, &end, 10)));
      p = end;
    } else {
      ++p;
    }
  }
  return out;
}

namespace {

template <typename Values>
std::string array_text(const Values& values) {
  std::string out = "{";
  for (int v : values) {
    if (out.size() > 1) out += ",";
    out += std::to_string(v);
  }
  return out + "}";
}

}  // namespace

std::string int_array(const std::set<int>& values) {
  return array_text(values);
}

std::string int_array(const std::vector<int>& values) {
  return array_text(values);
}

}  // namespace trellis::pg
