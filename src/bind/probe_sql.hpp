// Probe statements for define-time typing (docs/architecture.md, data path step 1): each field and
// the WHERE predicate become a temporary view over the source, so PostgreSQL itself resolves
// overloads, types the result and records which functions and operators the expression calls.
#pragma once

#include <string>
#include <vector>

#include "catalog/definition.hpp"

namespace trellis::bind {

// CREATE TEMP VIEW <view> AS SELECT (<expr_sql>) AS "f" FROM <source> AS <alias>
std::string probe_field_view(const std::string& view, const std::string& source_schema,
                             const std::string& source_table, const std::string& alias,
                             const std::string& expr_sql);
// CREATE TEMP VIEW <view> AS SELECT 1 FROM <source> AS <alias> WHERE (<predicate_sql>)
std::string probe_where_view(const std::string& view, const std::string& source_schema,
                             const std::string& source_table, const std::string& alias,
                             const std::string& predicate_sql);

// CREATE TEMP VIEW <view> AS SELECT (<expr_sql>) AS "f" FROM <from>, and the
// same with WHERE (<predicate_sql>).
std::string probe_view_over(const std::string& view, const std::string& from,
                            const std::string& expr_sql);
std::string probe_where_over(const std::string& view, const std::string& from,
                             const std::string& predicate_sql);

// CREATE TEMP VIEW <view> AS SELECT (<expr_sql>) AS "f" FROM pg_temp.<alias> AS <alias>
//   [GROUP BY <alias>.<group columns>]: PostgreSQL checks the grouping rules over the stand-in
//   of the source (probe_table), which holds what the ledger holds: the source's columns and a
//   column per GROUP BY expression (probe_group_column). No group: GROUP BY (), all rows.
//   `joins` are joined to the stand-in as the definition joins them to the source.
std::string probe_grouped_view(const std::string& view, const std::string& alias,
                               const std::string& expr_sql,
                               const std::vector<catalog::Column>& group,
                               const std::vector<catalog::JoinDef>& joins = {});
// CREATE INDEX <index> ON pg_temp.<alias> ((<expr>)): the immutability check of a GROUP BY
// expression, and the index whose pg_get_indexdef key is what a source index must lead with.
std::string probe_group_index(const std::string& index, const std::string& alias,
                              const std::string& expr_sql);
// ALTER TABLE pg_temp.<alias> ADD COLUMN <group column>.
std::string probe_group_column(const std::string& alias, const catalog::Column& column);
// CREATE TEMP TABLE <alias> (LIKE <source>): a stand-in the index probes
// below are built on, named like the alias so qualified references resolve.
std::string probe_table(const std::string& alias, const std::string& source_schema,
                        const std::string& source_table);
// An index over ((<expr>) IS NULL) on the stand-in: PostgreSQL refuses it
// unless every function, operator and cast the expression uses is immutable,
// and it refuses aggregates, window and set-returning functions.
std::string probe_immutable_expression(const std::string& alias, const std::string& expr_sql);
// A partial index WHERE (<predicate>), the same check for a predicate.
std::string probe_immutable_predicate(const std::string& alias, const std::string& predicate_sql);

}  // namespace trellis::bind
