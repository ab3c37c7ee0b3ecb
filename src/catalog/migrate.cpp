// Applies embedded migrations in version order, each in its own transaction,
// under an advisory lock so concurrent starters do not race. The instance row
// records the schema name and format so a foreign or newer catalog is refused
// instead of being modified.
#include "catalog/migrate.hpp"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "trellis/error.hpp"

namespace trellis::catalog {

namespace {

std::string render(std::string_view sql, const std::string& quoted_schema) {
  std::string out(sql);
  const std::string marker = "@schema@";
  for (size_t pos = out.find(marker); pos != std::string::npos; pos = out.find(marker, pos)) {
    out.replace(pos, marker.size(), quoted_schema);
    pos += quoted_schema.size();
  }
  return out;
}

// Returns the instance's format version, 0 when the schema holds no catalog.
int current_version(pg::Connection& conn, const std::string& schema) {
  auto has_instance =
      conn.exec("SELECT to_regclass(format('%I.instance', $1::text)) IS NOT NULL", {schema});
  if (!has_instance.get_bool(0, 0)) {
    auto objects = conn.exec(
        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = $1",
        {schema});
    if (objects.get_int(0, 0) > 0)
      throw Error(ErrorCode::conflict,
                  fmt::format("schema \"{}\" already holds tables that are not a Trellis catalog; "
                              "choose another catalog schema with --schema",
                              schema));
    return 0;
  }
  auto row = conn.exec(
      fmt::format("SELECT schema_name, format_version FROM {}.instance", conn.quote_ident(schema)));
  if (row.rows() != 1 || row.get(0, 0) != schema)
    throw Error(ErrorCode::conflict,
                fmt::format("schema \"{}\" holds the catalog of another Trellis instance (\"{}\"); "
                            "choose another catalog schema with --schema",
                            schema, row.rows() ? row.get(0, 0) : ""));
  return static_cast<int>(row.get_int(0, 1));
}

void check_not_newer(int version, const std::string& schema) {
  if (version > latest_format_version())
    throw Error(ErrorCode::conflict,
                fmt::format("catalog schema \"{}\" has format {}, newer than this Trellis "
                            "understands ({}); upgrade Trellis",
                            schema, version, latest_format_version()));
}

}  // namespace

int latest_format_version() {
  return embedded_migrations().back().first;
}

void migrate(pg::Connection& conn, const std::string& schema) {
  const std::string quoted = conn.quote_ident(schema);
  conn.exec("SELECT pg_advisory_lock(hashtext('trellis.migrate:' || $1))", {schema});
  try {
    int version = current_version(conn, schema);
    check_not_newer(version, schema);
    for (const auto& [number, sql] : embedded_migrations()) {
      if (number <= version) continue;
      pg::Transaction txn(conn);
      conn.exec_script(render(sql, quoted));
      conn.exec(fmt::format("INSERT INTO {}.instance (schema_name, format_version) VALUES ($1, $2) "
                            "ON CONFLICT (singleton) DO UPDATE SET format_version = $2",
                            quoted),
                {schema, std::to_string(number)});
      txn.commit();
    }
  } catch (...) {
    conn.exec("SELECT pg_advisory_unlock(hashtext('trellis.migrate:' || $1))", {schema});
    throw;
  }
  conn.exec("SELECT pg_advisory_unlock(hashtext('trellis.migrate:' || $1))", {schema});
}

void require_instance(pg::Connection& conn, const std::string& schema) {
  int version = current_version(conn, schema);
  if (version == 0)
    throw Error(ErrorCode::not_found,
                fmt::format("no Trellis catalog in schema \"{}\"; run `trellis run` or "
                            "`trellis apply` once to create it",
                            schema));
  check_not_newer(version, schema);
  if (version < latest_format_version())
    throw Error(ErrorCode::conflict,
                fmt::format("catalog schema \"{}\" has format {}, older than this Trellis ({}); "
                            "run `trellis run` once to migrate it",
                            schema, version, latest_format_version()));
}

}  // namespace trellis::catalog
