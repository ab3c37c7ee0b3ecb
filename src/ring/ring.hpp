// The staging ring (docs/architecture.md, data path step 4): sealing the active segment, fencing it
// with a fresh xid, listing its buckets once every writer that could still append has finished, and
// retiring drained segments by truncating their slot. Only the staging worker calls these, so they
// never race each other.
#pragma once

#include <cstdint>
#include <string>

#include "pg/connection.hpp"

namespace trellis::ring {

// The slot count and names are the catalog's (catalog/ring_geometry.hpp).
struct RingConfig {
  std::string schema;  // catalog schema (unquoted)
};

// CASE <seg_expr> % slots WHEN 0 THEN EXISTS (SELECT 1 FROM <slot 0>) ... END:
// whether the slot of the segment `seg_expr` evaluates to holds rows.
std::string slot_has_rows(const std::string& catalog_schema, const std::string& seg_expr);

class Ring {
 public:
  explicit Ring(RingConfig config);

  // What one cheap statement says about the ring, so an idle tick does
  // nothing more: whether the active segment's slot holds rows (a seal is
  // due) and whether any segment is between active and retired, or the
  // registry and the sequence disagree (recover, promote or retire has work).
  struct Probe {
    bool active_has_rows = false;
    bool segments_in_flight = false;
  };
  Probe probe(pg::Connection& conn);

  // Re-publishes the registry's active segment and fences any sealed segment
  // left without a fence, so a crash or error between the seal steps loses
  // nothing. Run on staging start and before every seal.
  void recover(pg::Connection& conn);
  // Seals the active segment when it holds rows and the next slot is free.
  bool seal(pg::Connection& conn);
  // Sealed segments whose fence has passed become ready (their buckets listed).
  int promote_fenced(pg::Connection& conn);
  // Ready segments with every bucket done become drained; drained slots are
  // truncated (NOWAIT) and retired. Returns the number retired.
  int retire(pg::Connection& conn);

  std::string slot_table(int64_t segment) const;
  const RingConfig& config() const { return config_; }

 private:
  std::string table(const char* name) const;
  std::string page_index(int64_t segment) const;  // the slot's page index name
  // Inside the promote transaction: indexes the segment's slot for drain pages
  // when it is large (see ring.cpp); a lock not granted at once skips it.
  void index_large_slot(pg::Connection& conn, int64_t segment);
  RingConfig config_;
};

}  // namespace trellis::ring
