// Connection pool; see pool.hpp. A connection that broke during a call is
// dropped instead of returned, so the next call reconnects.
#include "pg/pool.hpp"

namespace trellis::pg {

Pool::Pool(std::string url, int size) : url_(std::move(url)), size_(size > 0 ? size : 1) {}

Pool::Lease::Lease(Pool& pool, std::unique_ptr<Connection> conn)
    : pool_(&pool), conn_(std::move(conn)) {}

Pool::Lease::~Lease() {
  if (conn_) pool_->release(std::move(conn_));
}

Pool::Lease Pool::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(conn));
    }
  }
  return Lease(*this, Connection::open(url_));
}

void Pool::release(std::unique_ptr<Connection> conn) {
  if (!conn->healthy()) return;
  std::lock_guard lock(mutex_);
  if (idle_.size() < size_) idle_.push_back(std::move(conn));
}

void Pool::clear() {
  std::lock_guard lock(mutex_);
  idle_.clear();
}

}  // namespace trellis::pg
