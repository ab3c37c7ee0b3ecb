// The move guard of a partitioned source (compile/capture.hpp,
// MoveGuardSql; docs/architecture.md, "Partitioned sources"): whether this
// server needs one, which columns it watches, and putting it in place. The
// reconciler installs it with the root's capture; the drift check and the
// capture audit find it disabled or dropped.
#pragma once

#include <string>
#include <vector>

#include "catalog/definition.hpp"
#include "compile/capture.hpp"
#include "pg/connection.hpp"

namespace trellis::capture {

// True when statement triggers on this server see no row a MERGE's UPDATE
// moves into another partition (PostgreSQL 15 before the fix), or when that
// could not be found out. Probed once per server version and process.
bool server_hides_merge_moves(pg::Connection& conn);

// The columns the guard of partitioned table `root` (oid `relid`) watches:
// those its partition keys read at every level; empty when this server needs
// no guard.
std::vector<compile::WatchedColumn> move_guard_columns(pg::Connection& conn, unsigned relid);

// Creates (or recreates) the guard on `root` for `columns`, in the caller's
// transaction, which holds the root's capture lock.
void put_move_guard(pg::Connection& conn, const catalog::CapturedTable& root,
                    const std::vector<compile::WatchedColumn>& columns,
                    const compile::RingShape& ring);

// False when some node of the root's tree lacks the guard or has it disabled.
bool move_guard_intact(pg::Connection& conn, const catalog::CapturedTable& root,
                       const compile::RingShape& ring);

}  // namespace trellis::capture
