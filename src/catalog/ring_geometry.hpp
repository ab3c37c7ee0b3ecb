// The staging ring's geometry (docs/architecture.md, data path step 4): how many slot tables the
// catalog has, what they are called, and which slot a segment stages into.
// Migration 0001 creates the slot tables; tests/unit/ring_geometry_test.cpp
// checks that the migrations create exactly the tables named here.
#pragma once

#include <cstdint>
#include <string>

namespace trellis::catalog {

// Slot tables ring_0 .. ring_{kRingSlots - 1}.
inline constexpr int kRingSlots = 4;
// Claimable buckets per segment: a ring row's bucket is its key's hash modulo this.
inline constexpr int kRingBuckets = 16;

// The slot segment `segment` stages into.
inline int ring_slot(int64_t segment) {
  return static_cast<int>(segment % kRingSlots);
}

// The name of slot `slot`'s table in the catalog schema (unquoted).
inline std::string ring_slot_table(int slot) {
  return "ring_" + std::to_string(slot);
}

}  // namespace trellis::catalog
