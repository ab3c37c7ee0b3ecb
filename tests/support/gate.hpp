// A field function tests use to hold a re-derive (or a build range) open at a
// chosen point: public.gate(v) waits for advisory lock kPositiveGate (or
// kNegativeGate when v < 0) before it returns v, so the statement evaluating
// it stays open, its snapshot taken, for as long as a test session holds that
// lock. It lifts the worker's lock_timeout for its own transaction.
#pragma once

#include <memory>
#include <string>

#include "pg/connection.hpp"

namespace trellis::test {

inline constexpr int kPositiveGate = 4242;
inline constexpr int kNegativeGate = 4243;

inline constexpr const char* kGateFunction =
    "CREATE FUNCTION gate(x int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN PERFORM "
    "set_config('lock_timeout', '0', true); IF x < 0 THEN "
    "PERFORM pg_advisory_xact_lock_shared(4243); ELSE PERFORM "
    "pg_advisory_xact_lock_shared(4242); END IF; RETURN x; END $$";

// first_gate(v) waits for kNegativeGate when v < 0, in the first
// transaction that evaluates it (that one takes advisory lock 4244 until it
// ends); any other returns at once. It holds one re-derive open while a
// second, concurrent one goes on.
inline constexpr const char* kFirstGateFunction =
    "CREATE FUNCTION first_gate(x int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN "
    "PERFORM set_config('lock_timeout', '0', true); IF x < 0 AND pg_try_advisory_xact_lock(4244) "
    "THEN PERFORM pg_advisory_xact_lock_shared(4243); END IF; RETURN x; END $$";

static_assert(kNegativeGate == 4243, "first_gate waits on kNegativeGate");

// A session of its own holding advisory lock `key` until released.
inline std::unique_ptr<pg::Connection> hold_gate(const std::string& url, int key) {
  auto conn = pg::Connection::open(url);
  conn->exec("SELECT pg_advisory_lock(" + std::to_string(key) + ")");
  return conn;
}

inline void release_gate(pg::Connection& gate, int key) {
  gate.exec("SELECT pg_advisory_unlock(" + std::to_string(key) + ")");
}

}  // namespace trellis::test
