// What every API call of a handle shares: the options, the catalog store
// and the connection pool.
#pragma once

#include <memory>
#include <mutex>

#include "catalog/lifecycle.hpp"
#include "catalog/store.hpp"
#include "lang/statement.hpp"
#include "pg/pool.hpp"
#include "runtime/runtime.hpp"
#include "trellis/trellis.hpp"

namespace trellis {

namespace api {
struct MetricsEndpoint;
}

struct Trellis::Impl {
  Options options;
  catalog::Store store;
  catalog::Lifecycle lifecycle;
  pg::Pool pool;
  std::unique_ptr<Runtime> runtime;
  std::mutex metrics_mutex;
  std::shared_ptr<api::MetricsEndpoint> metrics;  // api/metrics.cpp

  explicit Impl(const Options& o)
      : options(o), store(o.schema), lifecycle(store), pool(o.url, o.pool_size) {}
};

namespace api {

// Statement handlers (api/statements.cpp).
Applied define_transform(Trellis::Impl& impl, const lang::TransformStmt& stmt);
Applied pause_transform(Trellis::Impl& impl, const lang::PauseStmt& stmt);
Applied resume_transform(Trellis::Impl& impl, const lang::ResumeStmt& stmt);
Applied drop_transform(Trellis::Impl& impl, const lang::DropTransformStmt& stmt);

// ADOPT EXISTING TABLE (api/adoption.cpp), inside define's and DROP's
// transactions: adopt def's existing target (sets def.adopted_columns) and
// return the note saying what was kept and added; remove what adoption
// added and say that the table stays.
std::string adopt_target(pg::Connection& conn, catalog::TransformDef& def);
std::string release_adopted_target(pg::Connection& conn, const catalog::TransformDef& def);
// RELATIONSHIP / DROP RELATIONSHIP and the listing (api/relationships.cpp).
Applied define_relationship(Trellis::Impl& impl, const lang::RelationshipStmt& stmt);
Applied drop_relationship(Trellis::Impl& impl, const lang::DropRelationshipStmt& stmt);
std::vector<Relationship> list_relationships(Trellis::Impl& impl);
// ALTER TRANSFORM (api/alter.cpp).
Applied alter_transform(Trellis::Impl& impl, const lang::AlterTransformStmt& stmt);

// PAUSE / RESUME TRANSFORM t.col (api/column_pause.cpp).
Applied pause_column(Trellis::Impl& impl, const catalog::TransformDef& def,
                     const std::string& column);
Applied resume_column(Trellis::Impl& impl, const catalog::TransformDef& def,
                      const std::string& column);

// Field builds (api/field_build.cpp). A transform's catalog row locked for
// an edit, inside the caller's transaction.
struct EditLock {
  int id = 0;
  catalog::EditRow row;
};
// Locks the row; `conflict` when its version moved since `def` was read.
EditLock lock_for_edit(Trellis::Impl& impl, pg::Connection& conn, const catalog::TransformDef& def,
                       const std::string& statement);
// A live (or building) transform goes back to building `fields` (plus the
// pending ones not in `gone`); false when nothing is to be built.
bool start_field_build(Trellis::Impl& impl, pg::Connection& conn, const EditLock& lock,
                       std::vector<std::string> fields, const std::vector<std::string>& gone);

// The definitions as a script of statements (api/dump.cpp).
std::string dump(Trellis::Impl& impl);

// Status records (api/status.cpp).
std::vector<Status> read_status(Trellis::Impl& impl, const std::optional<std::string>& target);

// Quarantine (api/quarantine.cpp).
QuarantinePage sample_quarantined(Trellis::Impl& impl, const std::string& target, int limit,
                                  const std::string& cursor);
void release_key(Trellis::Impl& impl, const std::string& target, const std::string& table,
                 const std::string& key);

// Rebuild in place (api/backfill.cpp); returns how many transforms.
int request_backfill(Trellis::Impl& impl, const std::string& table);

// The reset of an application's test suite (api/test_reset.cpp).
TestResetReport test_reset(Trellis::Impl& impl, std::chrono::milliseconds timeout);

// Self-check jobs (api/self_check.cpp).
SelfCheckJob self_check(Trellis::Impl& impl, const std::string& target,
                        const SelfCheckOptions& options);
std::optional<SelfCheckJob> self_check_job(Trellis::Impl& impl, int64_t id);
SelfCheckJob await_self_check(Trellis::Impl& impl, int64_t id, std::chrono::milliseconds timeout);

// Prometheus metrics (api/metrics.cpp): the text, and the HTTP endpoint
// at `address` (HOST:PORT; port 0 picks a free one) until stop_metrics.
std::string metrics_text(Trellis::Impl& impl);
void serve_metrics(Trellis::Impl& impl, const std::string& address);
int metrics_port(Trellis::Impl& impl);  // 0 when not serving
void stop_metrics(Trellis::Impl& impl);

// Convergence (api/convergence.cpp).
Token take_token(Trellis::Impl& impl);
bool wait_converged(Trellis::Impl& impl, const Token& token, std::chrono::milliseconds timeout);
Status wait_live(Trellis::Impl& impl, const std::string& target, std::chrono::milliseconds timeout);

// Naming transforms (api/addressing.cpp). `not_found` when there is none.
catalog::TransformDef require_transform(Trellis::Impl& impl, pg::Connection& conn,
                                        const lang::QualifiedName& name);
catalog::TransformDef require_transform(Trellis::Impl& impl, pg::Connection& conn,
                                        const std::string& target);  // "[schema.]table"
// A transform, or one field of it (PAUSE/RESUME, sample_quarantined).
struct Address {
  catalog::TransformDef def;
  std::optional<std::string> column;
};
Address locate(Trellis::Impl& impl, pg::Connection& conn, const lang::QualifiedName& target,
               const std::optional<std::string>& column);
Address locate(Trellis::Impl& impl, pg::Connection& conn, const std::string& dotted);
// The transforms whose source is def's target.
std::vector<catalog::TransformDef> readers_of_target(Trellis::Impl& impl, pg::Connection& conn,
                                                     const catalog::TransformDef& def);

// "schema.table" or "table" (in the target schema), split.
std::pair<std::string, std::string> split_target(const Trellis::Impl& impl,
                                                 const std::string& target);

}  // namespace api
}  // namespace trellis
