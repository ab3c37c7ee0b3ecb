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

// Before creating or upgrading the catalog: the current role may create
// the schema (CREATE on the database) when it is missing, or create in it
// (USAGE and CREATE on it) when it is there; refused naming the GRANT.
void check_may_migrate(pg::Connection& conn, const std::string& schema) {
  auto r = conn.exec(
      "SELECT n.oid IS NOT NULL, coalesce(has_schema_privilege(n.oid, 'USAGE') AND "
      "has_schema_privilege(n.oid, 'CREATE'), has_database_privilege(current_database(), "
      "'CREATE')), quote_ident(current_user), quote_ident(current_database()) FROM (SELECT "
      "(SELECT oid FROM pg_namespace WHERE nspname = $1) AS oid) n",
      {schema});
  if (r.get_bool(0, 1)) return;
  std::string role = r.get(0, 2), quoted = conn.quote_ident(schema);
  if (r.get_bool(0, 0))
    throw Error(ErrorCode::validation,
                fmt::format("role {0} may not create the tables of the Trellis catalog in schema "
                            "{1}: it lacks USAGE or CREATE on it; run: GRANT USAGE, CREATE ON "
                            "SCHEMA {1} TO {0}",
                            role, quoted));
  throw Error(ErrorCode::validation,
              fmt::format("role {0} may not create the Trellis catalog schema {1}: it lacks CREATE "
                          "on database {2}; run: GRANT CREATE ON DATABASE {2} TO {0} (or, as an "
                          "administrator: CREATE SCHEMA {1} AUTHORIZATION {0})",
                          role, quoted, r.get(0, 3)));
}

// The catalog's tables belong to the role that created its schema; another
// role works with them only as a member of that role.
void check_catalog_owner(pg::Connection& conn, const std::string& schema) {
  auto r = conn.exec(
      "SELECT pg_has_role(current_user, n.nspowner, 'USAGE'), quote_ident(current_user), "
      "quote_ident(pg_get_userbyid(n.nspowner)) FROM pg_namespace n WHERE n.nspname = $1",
      {schema});
  if (r.rows() == 0 || r.get_bool(0, 0)) return;
  throw Error(ErrorCode::validation,
              fmt::format("the catalog schema {0} belongs to role {1}, and role {2} is not a "
                          "member of it; connect as {1}, or run: GRANT {1} TO {2}",
                          conn.quote_ident(schema), r.get(0, 2), r.get(0, 1)));
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
    check_catalog_owner(conn, schema);
    int version = current_version(conn, schema);
    check_not_newer(version, schema);
    if (version < latest_format_version()) check_may_migrate(conn, schema);
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
