// Reads and writes of the catalog tables that several stages share
// (transforms and captured tables). The catalog schema is the only thing
// substituted into these fixed statements.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "catalog/definition.hpp"
#include "pg/connection.hpp"

namespace trellis::catalog {

class Store {
 public:
  explicit Store(std::string schema);

  const std::string& schema() const { return schema_; }
  std::string table(const std::string& name) const;  // "schema"."name"

  // `status_filter_sql` is a fixed condition (its text keys a prepared
  // statement), never one built from values.
  std::vector<TransformDef> transforms(pg::Connection& conn,
                                       const std::string& status_filter_sql = "true");
  std::optional<TransformDef> transform(pg::Connection& conn, const std::string& target_schema,
                                        const std::string& target_table);
  std::optional<TransformDef> transform_by_id(pg::Connection& conn, int id);
  // Transforms a drain must re-derive for (built or being built) among those
  // reading `tables` (captured-table ids), in id order.
  std::vector<TransformDef> active_readers(pg::Connection& conn, const std::set<int>& tables);

  std::vector<CapturedTable> captured_tables(pg::Connection& conn);
  std::optional<CapturedTable> captured_table(pg::Connection& conn, const std::string& schema,
                                              const std::string& name);
  // Returns the id of the captured-table row, creating it with `key` if absent.
  int ensure_captured_table(pg::Connection& conn, const std::string& schema,
                            const std::string& name, const std::vector<Column>& key);

  // A SELECT of the transforms whose target the transform row `alias` reads
  // and that are not live (id, target as schema.table, status): a
  // waiting_to_backfill transform starts its build only once this is empty.
  std::string non_live_upstreams(const std::string& alias) const;
  // The condition that transform row `alias` waits for an upstream: it is
  // waiting_to_backfill and non_live_upstreams(alias) is not empty.
  std::string waits_for_upstream(const std::string& alias) const;

  // A digest of what capture reconciliation depends on (each transform's
  // id, status, version and build phase; each captured table's installed
  // signature and oid): unchanged means a settled reconcile has nothing to do.
  std::string fingerprint(pg::Connection& conn);

  void set_status(pg::Connection& conn, int transform_id, const std::string& status);
  // Wakes the drain threads of this instance.
  void notify_work(pg::Connection& conn);
  std::string work_channel() const;

 private:
  std::vector<TransformDef> read(pg::Connection& conn, const std::string& where,
                                 const std::vector<pg::Param>& params);
  std::string schema_;
};

}  // namespace trellis::catalog
