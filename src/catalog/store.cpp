// Catalog reads and writes shared by the API, the staging worker and drains.
#include "catalog/store.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "catalog/transitions.hpp"
#include "pg/arrays.hpp"

namespace trellis::catalog {

Store::Store(std::string schema) : schema_(std::move(schema)) {}

std::string Store::table(const std::string& name) const {
  return base::qualified(schema_, name);
}

std::string Store::work_channel() const {
  return schema_ + "_work";
}

std::vector<TransformDef> Store::read(pg::Connection& conn, const std::string& where,
                                      const std::vector<pg::Param>& params) {
  auto res = conn.exec_prepared(
      fmt::format("SELECT id, version, status, source_table_id, statement, definition::text, "
                  "EXISTS (SELECT 1 FROM {} c WHERE c.table_schema = t.target_schema AND "
                  "c.table_name = t.target_table AND c.installed_signature IS NOT NULL), "
                  "paused_columns::text, status = {} AND build_phase IN ({}, {}), "
                  "to_jsonb(adopted_columns)::text FROM {} t WHERE {} ORDER BY id",
                  table("captured_tables"), literal(Status::backfilling),
                  literal(BuildPhase::ranges), literal(BuildPhase::group_ranges),
                  table("transforms"), where),
      params);
  std::vector<TransformDef> out;
  for (int i = 0; i < res.rows(); ++i) {
    TransformDef d = transform_from_json(nlohmann::json::parse(res.get(i, 5)));
    d.id = static_cast<int>(res.get_int(i, 0));
    d.version = static_cast<int>(res.get_int(i, 1));
    d.status = status_named(res.get(i, 2));
    d.source_table_id = static_cast<int>(res.get_int(i, 3));
    d.statement = res.get(i, 4);
    d.feeds_downstream = res.get_bool(i, 6);
    auto paused = nlohmann::json::parse(res.get(i, 7));
    for (auto it = paused.begin(); it != paused.end(); ++it) d.paused_columns.push_back(it.key());
    d.parks_changes = res.get_bool(i, 8);
    if (auto adopted = res.get_opt(i, 9)) {
      d.adopted = true;
      d.adopted_columns = nlohmann::json::parse(*adopted).get<std::vector<std::string>>();
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<TransformDef> Store::transforms(pg::Connection& conn) {
  return read(conn, "true", {});
}

std::vector<TransformDef> Store::running_transforms(pg::Connection& conn) {
  return read(conn, running(), {});
}

std::vector<TransformDef> Store::capture_readers(pg::Connection& conn) {
  return read(conn, "status <> " + literal(Status::paused) + " AND NOT " + waits_for_upstream("t"),
              {});
}

std::optional<TransformDef> Store::transform(pg::Connection& conn, const std::string& target_schema,
                                             const std::string& target_table) {
  auto all = read(conn, "target_schema = $1 AND target_table = $2", {target_schema, target_table});
  if (all.empty()) return std::nullopt;
  return all.front();
}

std::vector<TransformDef> Store::active_readers(pg::Connection& conn, const std::set<int>& tables) {
  return read(conn, running("t") + " AND " + read_table_ids("t") + " && $1::int[]",
              {pg::int_array(tables)});
}

std::optional<TransformDef> Store::transform_by_id(pg::Connection& conn, int id) {
  auto found = read(conn, "id = $1::int", {std::to_string(id)});
  if (found.empty()) return std::nullopt;
  return found.front();
}

std::vector<CapturedTable> Store::captured_tables(pg::Connection& conn) {
  auto res = conn.exec_prepared(
      fmt::format("SELECT id, table_schema, table_name, key_columns::text, "
                  "installed_signature, relid::bigint, installed_digest FROM {} ORDER "
                  "BY id",
                  table("captured_tables")));
  std::vector<CapturedTable> out;
  for (int i = 0; i < res.rows(); ++i) {
    CapturedTable t;
    t.id = static_cast<int>(res.get_int(i, 0));
    t.schema = res.get(i, 1);
    t.name = res.get(i, 2);
    t.key = columns_from_json(nlohmann::json::parse(res.get(i, 3)));
    t.installed_signature = res.get_opt(i, 4);
    t.relid = static_cast<unsigned>(res.get_int(i, 5));
    t.installed_digest = res.get_opt(i, 6);
    out.push_back(std::move(t));
  }
  return out;
}

std::optional<CapturedTable> Store::captured_table(pg::Connection& conn, const std::string& schema,
                                                   const std::string& name) {
  for (auto& t : captured_tables(conn))
    if (t.schema == schema && t.name == name) return t;
  return std::nullopt;
}

int Store::ensure_captured_table(pg::Connection& conn, const std::string& schema,
                                 const std::string& name, const std::vector<Column>& key) {
  auto res = conn.exec(
      fmt::format(
          "INSERT INTO {} (table_schema, table_name, relid, key_columns) "
          "VALUES ($1, $2, (quote_ident($1) || '.' || quote_ident($2))::regclass, $3::jsonb) "
          "ON CONFLICT (table_schema, table_name) DO UPDATE SET table_schema = "
          "EXCLUDED.table_schema RETURNING id",
          table("captured_tables")),
      {schema, name, columns_to_json(key).dump()});
  return static_cast<int>(res.get_int(0, 0));
}

void Store::mark_capture_installed(pg::Connection& conn, int id, const std::string& signature,
                                   const std::string& qualified, const std::string& digest_sql) {
  conn.exec(fmt::format("UPDATE {} SET installed_signature = $2, relid = $3::regclass, "
                        "installed_digest = ({}) WHERE id = $1::int",
                        table("captured_tables"), digest_sql),
            {std::to_string(id), signature, qualified});
}

void Store::mark_capture_stale(pg::Connection& conn, int id) {
  conn.exec(fmt::format("UPDATE {} SET installed_signature = '\"stale\"' WHERE id = $1::int AND "
                        "installed_signature IS NOT NULL",
                        table("captured_tables")),
            {std::to_string(id)});
}

void Store::mark_capture_removed(pg::Connection& conn, int id) {
  conn.exec(fmt::format("UPDATE {} SET installed_signature = NULL, installed_digest = NULL WHERE "
                        "id = $1::int",
                        table("captured_tables")),
            {std::to_string(id)});
}

std::string Store::non_live_upstreams(const std::string& alias) const {
  return fmt::format(
      "SELECT u.id, u.target_schema || '.' || u.target_table AS target, u.status FROM {} uc "
      "JOIN {} u ON u.target_schema = uc.table_schema AND u.target_table = uc.table_name WHERE "
      "uc.id = ANY({}) AND u.status <> {}",
      table("captured_tables"), table("transforms"), read_table_ids(alias), literal(Status::live));
}

std::string Store::waits_for_upstream(const std::string& alias) const {
  return fmt::format("({0}.status = {1} AND EXISTS ({2}))", alias,
                     literal(Status::waiting_to_backfill), non_live_upstreams(alias));
}

std::string Store::holds_changes_through(const std::string& seg_sql) const {
  return fmt::format(
      "EXISTS (SELECT 1 FROM {} h JOIN {} t ON t.id = h.transform_id WHERE h.held AND "
      "coalesce(h.seg, 0) <= {} AND {})",
      table("held_keys"), table("transforms"), seg_sql, running("t"));
}

int Store::transform_count(pg::Connection& conn) {
  return static_cast<int>(
      conn.exec(fmt::format("SELECT count(*) FROM {}", table("transforms"))).get_int(0, 0));
}

std::string Store::fingerprint(pg::Connection& conn) {
  return conn
      .exec_prepared(fmt::format(
          "SELECT md5(coalesce((SELECT string_agg(id || ':' || status || ':' || version || ':' || "
          "coalesce(build_phase, ''), ',' ORDER BY id) FROM {}), '') || '|' || "
          "coalesce((SELECT string_agg(id || ':' || coalesce(md5(installed_signature), '') || ':' "
          "|| relid, ',' ORDER BY id) FROM {}), ''))",
          table("transforms"), table("captured_tables")))
      .get(0, 0);
}

void Store::notify_work(pg::Connection& conn) {
  conn.exec("SELECT pg_notify($1, '')", {work_channel()});
}

int64_t Store::held_key_count(pg::Connection& conn, int id) {
  return conn
      .exec("SELECT count(*) FROM " + table("held_keys") + " WHERE transform_id = $1 AND held",
            {std::to_string(id)})
      .get_int(0, 0);
}

}  // namespace trellis::catalog
