// How far the ring has been drained, for tokens and await: a token is the
// newest segment that can hold a change committed before it (the active
// segment if its slot already holds committed rows, else the one before);
// a segment range is drained through a token once every segment up to it is
// drained and none of its changes is held in quarantine for a transform that
// still runs. A drained segment records the newest segment its target writes
// could have staged into (chained targets), which the wait follows.
#pragma once

#include <cstdint>

#include "catalog/store.hpp"
#include "pg/connection.hpp"

namespace trellis::ring {

int64_t token_segment(pg::Connection& conn, const catalog::Store& store);
// Every segment up to `seg` is drained (the active one counts as drained
// while it holds no committed row, a ready one once all its buckets are done)
// and no change in them is held.
bool drained_through(pg::Connection& conn, const catalog::Store& store, int64_t seg);
// The newest segment the drains of segments up to `seg` wrote into.
int64_t downstream_reach(pg::Connection& conn, const catalog::Store& store, int64_t seg);

}  // namespace trellis::ring
