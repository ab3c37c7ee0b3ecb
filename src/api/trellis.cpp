// The Trellis handle: connect (migrating the catalog if needed and starting
// the requested workers), statement dispatch, and the simple read calls.
#include <fmt/format.h>

#include <map>

#include "api/instance.hpp"
#include "catalog/migrate.hpp"
#include "pg/sql_error.hpp"
#include "ring/backlog.hpp"
#include "runtime/runtime.hpp"

namespace trellis {

namespace {

// Maps PostgreSQL failures escaping an API call to trellis::Error.
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const pg::SqlError& e) {
    if (e.failure_class() == pg::FailureClass::transient && pg::is_connection_lost(e))
      throw Error(ErrorCode::connectivity,
                  fmt::format("lost the database connection: {}", e.what()));
    throw Error(ErrorCode::internal, fmt::format("database error {}: {}", e.sqlstate(), e.what()));
  }
}

// For calls that only read: a connection that broke since its last use
// (a server restart) is replaced and the call tried once more.
template <typename F>
auto reading(Trellis::Impl& impl, F&& f) -> decltype(f()) {
  try {
    return guarded(f);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::connectivity) throw;
    impl.pool.clear();
    return guarded(f);
  }
}

}  // namespace

Trellis::Trellis(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Trellis::~Trellis() {
  shutdown();
}

std::unique_ptr<Trellis> Trellis::connect(const Options& options) {
  auto impl = std::make_unique<Impl>(options);
  guarded([&] {
    auto conn = impl->pool.acquire();
    catalog::migrate(*conn, options.schema);
    return 0;
  });
  std::unique_ptr<Trellis> handle(new Trellis(std::move(impl)));
  if (!options.metrics_address.empty())
    guarded([&] {
      api::serve_metrics(*handle->impl_, options.metrics_address);
      return 0;
    });
  if (options.staging || options.drain_threads > 0) {
    handle->impl_->runtime = std::make_unique<Runtime>(options);
    handle->impl_->runtime->start();
  }
  return handle;
}

Applied Trellis::apply(const std::string& statement) {
  auto parsed = lang::parse_statement(statement);
  return guarded([&] {
    return std::visit(
        [&](const auto& stmt) -> Applied {
          using T = std::decay_t<decltype(stmt)>;
          if constexpr (std::is_same_v<T, lang::TransformStmt>)
            return api::define_transform(*impl_, stmt);
          else if constexpr (std::is_same_v<T, lang::PauseStmt>)
            return api::pause_transform(*impl_, stmt);
          else if constexpr (std::is_same_v<T, lang::ResumeStmt>)
            return api::resume_transform(*impl_, stmt);
          else if constexpr (std::is_same_v<T, lang::AlterTransformStmt>)
            return api::alter_transform(*impl_, stmt);
          else if constexpr (std::is_same_v<T, lang::RelationshipStmt>)
            return api::define_relationship(*impl_, stmt);
          else if constexpr (std::is_same_v<T, lang::DropRelationshipStmt>)
            return api::drop_relationship(*impl_, stmt);
          else
            return api::drop_transform(*impl_, stmt);
        },
        parsed);
  });
}

std::optional<Status> Trellis::status(const std::string& target) {
  auto all = reading(*impl_, [&] { return api::read_status(*impl_, target); });
  if (all.empty()) return std::nullopt;
  return all.front();
}

std::vector<Status> Trellis::status_all() {
  return reading(*impl_, [&] { return api::read_status(*impl_, std::nullopt); });
}

std::vector<Relationship> Trellis::relationships() {
  return reading(*impl_, [&] { return api::list_relationships(*impl_); });
}

std::vector<Definition> Trellis::definitions() {
  return reading(*impl_, [&] {
    auto conn = impl_->pool.acquire();
    std::map<std::string, std::optional<CaptureFailure>> halts;
    for (auto& s : api::read_status(*impl_, std::nullopt))
      if (s.capture_failure && s.capture_failure->kind == catalog::name(catalog::FailureKind::halt))
        halts[s.target] = s.capture_failure;
    std::vector<Definition> out;
    for (const auto& d : impl_->store.transforms(*conn))
      out.push_back({d.target_name(),
                     d.statement,
                     std::string(catalog::name(d.shape)),
                     {d.source_name()},
                     std::string(catalog::name(d.status)),
                     halts[d.target_name()],
                     d.paused_columns});
    return out;
  });
}

std::string Trellis::dump() {
  return reading(*impl_, [&] { return api::dump(*impl_); });
}

Token Trellis::watermark_token() {
  return reading(*impl_, [&] { return api::take_token(*impl_); });
}

bool Trellis::await_converged(const Token& token, std::chrono::milliseconds timeout) {
  return reading(*impl_, [&] { return api::wait_converged(*impl_, token, timeout); });
}

Status Trellis::await_live(const std::string& target, std::chrono::milliseconds timeout) {
  return reading(*impl_, [&] { return api::wait_live(*impl_, target, timeout); });
}

QuarantinePage Trellis::sample_quarantined(const std::string& target, int limit,
                                           const std::string& cursor) {
  return reading(*impl_, [&] { return api::sample_quarantined(*impl_, target, limit, cursor); });
}

void Trellis::release_key(const std::string& target, const std::string& table,
                          const std::string& key) {
  guarded([&] {
    api::release_key(*impl_, target, table, key);
    return 0;
  });
}

int Trellis::request_backfill(const std::string& table) {
  return guarded([&] { return api::request_backfill(*impl_, table); });
}

TestResetReport Trellis::test_reset(std::chrono::milliseconds timeout) {
  return guarded([&] { return api::test_reset(*impl_, timeout); });
}

SelfCheckJob Trellis::self_check(const std::string& target, const SelfCheckOptions& options) {
  return guarded([&] { return api::self_check(*impl_, target, options); });
}

std::optional<SelfCheckJob> Trellis::self_check_job(int64_t id) {
  return reading(*impl_, [&] { return api::self_check_job(*impl_, id); });
}

SelfCheckJob Trellis::await_self_check(int64_t id, std::chrono::milliseconds timeout) {
  return reading(*impl_, [&] { return api::await_self_check(*impl_, id, timeout); });
}

bool Trellis::has_live_staging_worker() {
  return reading(*impl_, [&] {
    auto conn = impl_->pool.acquire();
    return has_live_worker(*conn, impl_->options.schema, "staging");
  });
}

bool Trellis::has_live_drain_workers() {
  return reading(*impl_, [&] {
    auto conn = impl_->pool.acquire();
    return has_live_worker(*conn, impl_->options.schema, "drain");
  });
}

std::string Trellis::metrics_text() {
  return reading(*impl_, [&] { return api::metrics_text(*impl_); });
}

RingBacklog Trellis::ring_backlog() {
  return reading(*impl_, [&] {
    auto conn = impl_->pool.acquire();
    auto b = ring::read_backlog(*conn, impl_->store.schema());
    return RingBacklog{b.rows, b.bytes};
  });
}

int Trellis::metrics_port() {
  return api::metrics_port(*impl_);
}

void Trellis::shutdown() {
  if (!impl_) return;
  api::stop_metrics(*impl_);
  if (impl_->runtime) impl_->runtime->stop();
  impl_->runtime.reset();
  impl_->pool.clear();
}

namespace api {

std::pair<std::string, std::string> split_target(const Trellis::Impl& impl,
                                                 const std::string& target) {
  auto dot = target.find('.');
  if (dot == std::string::npos) return {impl.options.target_schema, target};
  return {target.substr(0, dot), target.substr(dot + 1)};
}

}  // namespace api
}  // namespace trellis
