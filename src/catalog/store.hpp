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

  std::vector<TransformDef> transforms(pg::Connection& conn);
  // The transforms drains re-derive for (backfilling or live).
  std::vector<TransformDef> running_transforms(pg::Connection& conn);
  // The transforms capture is installed for: all but the paused ones and
  // those waiting for an upstream that is not live.
  std::vector<TransformDef> capture_readers(pg::Connection& conn);
  std::optional<TransformDef> transform(pg::Connection& conn, const std::string& target_schema,
                                        const std::string& target_table);
  std::optional<TransformDef> transform_by_id(pg::Connection& conn, int id);
  // Transforms a drain must re-derive for (built or being built) among those
  // reading `tables` (captured-table ids), in id order.
  std::vector<TransformDef> active_readers(pg::Connection& conn, const std::set<int>& tables);

  // How many source keys transform `id` holds in quarantine.
  int64_t held_key_count(pg::Connection& conn, int id);

  std::vector<CapturedTable> captured_tables(pg::Connection& conn);
  std::optional<CapturedTable> captured_table(pg::Connection& conn, const std::string& schema,
                                              const std::string& name);
  // Returns the id of the captured-table row, creating it with `key` if absent.
  int ensure_captured_table(pg::Connection& conn, const std::string& schema,
                            const std::string& name, const std::vector<Column>& key);

  // Capture of captured table `id` is installed from `signature` on the
  // table named `qualified`; `digest_sql` is a subquery giving the digest
  // of its trigger functions' bodies. Removed: no signature, no digest.
  void mark_capture_installed(pg::Connection& conn, int id, const std::string& signature,
                              const std::string& qualified, const std::string& digest_sql);
  void mark_capture_removed(pg::Connection& conn, int id);
  // The installed capture no longer fits the table's layout: the reconciler
  // reinstalls it (a signature that matches nothing).
  void mark_capture_stale(pg::Connection& conn, int id);

  // A SELECT of the transforms whose target the transform row `alias` reads
  // and that are not live (id, target as schema.table, status): a
  // waiting_to_backfill transform starts its build only once this is empty.
  std::string non_live_upstreams(const std::string& alias) const;
  // The condition that transform row `alias` waits for an upstream: it is
  // waiting_to_backfill and non_live_upstreams(alias) is not empty.
  std::string waits_for_upstream(const std::string& alias) const;

  // The condition that some change in a segment up to `seg_sql` is held in
  // quarantine for a transform that still runs (a key held by the build
  // blocks every token).
  std::string holds_changes_through(const std::string& seg_sql) const;
  int transform_count(pg::Connection& conn);

  // A digest of what capture reconciliation depends on (each transform's
  // id, status, version and build phase; each captured table's installed
  // signature and oid): unchanged means a settled reconcile has nothing to do.
  std::string fingerprint(pg::Connection& conn);

  // Wakes the drain threads of this instance.
  void notify_work(pg::Connection& conn);
  std::string work_channel() const;

 private:
  std::vector<TransformDef> read(pg::Connection& conn, const std::string& where,
                                 const std::vector<pg::Param>& params);
  std::string schema_;
};

}  // namespace trellis::catalog
