// Short lock waits; see lock_timeout.hpp.
#include "pg/lock_timeout.hpp"

#include <string>

#include "pg/sql_error.hpp"

namespace trellis::pg {

void set_local_lock_timeout(Connection& conn, std::chrono::milliseconds timeout) {
  conn.exec("SET LOCAL lock_timeout = '" + std::to_string(timeout.count()) + "ms'");
}

bool try_under_lock_timeout(Connection& conn, const std::function<void()>& work,
                            std::chrono::milliseconds timeout) {
  try {
    Transaction txn(conn);
    set_local_lock_timeout(conn, timeout);
    work();
    txn.commit();
    return true;
  } catch (const SqlError& e) {
    if (!is_lock_not_available(e) || !conn.healthy()) throw;
    return false;
  }
}

}  // namespace trellis::pg
