// The oracle (docs/testing.md): a target compared with its definition run as a
// plain SELECT. Rows are compared as jsonb, so text and every other value
// compare byte for byte while numerics compare by value.
#pragma once

#include <string>

#include "catalog/definition.hpp"

namespace trellis::compile {

// Returns rows (side, row jsonb): 'missing' rows the SELECT has and the
// target lacks, 'extra' rows the target has and the SELECT lacks; at most `limit`.
std::string oracle_diff_sql(const catalog::TransformDef& def, int limit);

// Field `f`'s value `value` as the oracle compares it: jsonb, and for a
// floating-point field of an aggregate that value rounded (see oracle.cpp).
std::string compared_value(const catalog::TransformDef& def, const catalog::Field& f,
                           const std::string& value);

}  // namespace trellis::compile
