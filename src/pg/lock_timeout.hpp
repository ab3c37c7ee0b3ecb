// Short lock waits for DDL and table locks taken next to the application's
// traffic: a lock request queued behind a long transaction blocks every
// later user of the table, so the staging worker gives up at once and tries
// again on a later tick instead of waiting.
#pragma once

#include <chrono>
#include <functional>

#include "pg/connection.hpp"

namespace trellis::pg {

// The lock timeout of the staging worker's DDL (capture install and
// removal, in-place widening, the ring's page index and slot truncation).
inline constexpr std::chrono::milliseconds kShortLockTimeout{50};

// SET LOCAL lock_timeout for the rest of the open transaction (or until
// the savepoint it was set after is rolled back).
void set_local_lock_timeout(Connection& conn,
                            std::chrono::milliseconds timeout = kShortLockTimeout);

// Runs `work` in a transaction of its own under set_local_lock_timeout and
// commits it: true. False, rolled back, when a lock was not available in
// time (is_lock_not_available on a connection still healthy); every other
// error propagates.
bool try_under_lock_timeout(Connection& conn, const std::function<void()>& work,
                            std::chrono::milliseconds timeout = kShortLockTimeout);

}  // namespace trellis::pg
