// What every API call of a handle shares: the options, the catalog store
// and the connection pool.
#pragma once

#include <memory>

#include "catalog/store.hpp"
#include "lang/statement.hpp"
#include "pg/pool.hpp"
#include "runtime/runtime.hpp"
#include "trellis/trellis.hpp"

namespace trellis {

struct Trellis::Impl {
  Options options;
  catalog::Store store;
  pg::Pool pool;
  std::unique_ptr<Runtime> runtime;

  explicit Impl(const Options& o) : options(o), store(o.schema), pool(o.url, o.pool_size) {}
};

namespace api {

// Statement handlers (api/statements.cpp).
Applied define_transform(Trellis::Impl& impl, const lang::TransformStmt& stmt);
Applied pause_transform(Trellis::Impl& impl, const lang::PauseStmt& stmt);
Applied resume_transform(Trellis::Impl& impl, const lang::ResumeStmt& stmt);
Applied drop_transform(Trellis::Impl& impl, const lang::DropTransformStmt& stmt);
// ALTER TRANSFORM (api/alter.cpp).
Applied alter_transform(Trellis::Impl& impl, const lang::AlterTransformStmt& stmt);

// Status records (api/status.cpp).
std::vector<Status> read_status(Trellis::Impl& impl, const std::optional<std::string>& target);

// Quarantine (api/quarantine.cpp).
QuarantinePage sample_quarantined(Trellis::Impl& impl, const std::string& target, int limit,
                                  const std::string& cursor);
void release_key(Trellis::Impl& impl, const std::string& target, const std::string& table,
                 const std::string& key);

// Rebuild in place (api/backfill.cpp); returns how many transforms.
int request_backfill(Trellis::Impl& impl, const std::string& table);

// Convergence (api/convergence.cpp).
Token take_token(Trellis::Impl& impl);
bool wait_converged(Trellis::Impl& impl, const Token& token, std::chrono::milliseconds timeout);

// "schema.table" or "table" (in the target schema), split.
std::pair<std::string, std::string> split_target(const Trellis::Impl& impl,
                                                 const std::string& target);

}  // namespace api
}  // namespace trellis
