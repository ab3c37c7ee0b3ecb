// Catalog migrations: creates or upgrades an instance's catalog schema from
// the .sql files compiled into the binary, and checks the instance identity.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pg/connection.hpp"

namespace trellis::catalog {

// The migrations compiled into the binary (generated from migrations/*.sql
// by cmake/embed_migrations.cmake): (version, SQL text with @schema@ where
// the quoted catalog schema goes), in version order.
const std::vector<std::pair<int, std::string_view>>& embedded_migrations();

// The newest catalog format this binary knows.
int latest_format_version();

// Creates the catalog schema or applies the migrations it lacks. Idempotent
// and safe to run from several processes at once (advisory lock). Refuses a
// schema that belongs to something else or to a newer Trellis.
void migrate(pg::Connection& conn, const std::string& schema);

// Throws trellis::Error(not_found) unless the instance exists at a format
// this binary can serve.
void require_instance(pg::Connection& conn, const std::string& schema);

}  // namespace trellis::catalog
