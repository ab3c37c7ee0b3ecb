// Probe statements for define-time typing (DESIGN §6): each field and the
// WHERE predicate become a temporary view over the source, so PostgreSQL
// itself resolves overloads, types the result and records which functions
// and operators the expression calls.
#pragma once

#include <string>

namespace trellis::compile {

// CREATE TEMP VIEW <view> AS SELECT (<expr_sql>) AS "f" FROM <source> AS <alias>
std::string probe_field_view(const std::string& view, const std::string& source_schema,
                             const std::string& source_table, const std::string& alias,
                             const std::string& expr_sql);
// CREATE TEMP VIEW <view> AS SELECT 1 FROM <source> AS <alias> WHERE (<predicate_sql>)
std::string probe_where_view(const std::string& view, const std::string& source_schema,
                             const std::string& source_table, const std::string& alias,
                             const std::string& predicate_sql);

}  // namespace trellis::compile
