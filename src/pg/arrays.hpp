// Text forms of PostgreSQL integer arrays, for passing sets of ids as one
// parameter and reading array_agg results back.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace trellis::pg {

std::set<int> parse_int_array(const std::string& text);  // "{1,2}" (or "" for NULL)
std::string int_array(const std::set<int>& values);      // "{1,2}"
std::string int_array(const std::vector<int>& values);   // "{2,1,2}": order and repeats kept

}  // namespace trellis::pg
