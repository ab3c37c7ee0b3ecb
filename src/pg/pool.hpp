// A small pool of pinned connections for API calls, so concurrent callers of
// one handle do not serialise on a single connection.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pg/connection.hpp"

namespace trellis::pg {

class Pool {
 public:
  Pool(std::string url, int size);

  class Lease {
   public:
    Lease(Pool& pool, std::unique_ptr<Connection> conn);
    ~Lease();
    Lease(Lease&&) = default;
    Connection& operator*() { return *conn_; }
    Connection* operator->() { return conn_.get(); }

   private:
    Pool* pool_;
    std::unique_ptr<Connection> conn_;
  };

  Lease acquire();
  void clear();

 private:
  void release(std::unique_ptr<Connection> conn);
  std::string url_;
  size_t size_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

}  // namespace trellis::pg
