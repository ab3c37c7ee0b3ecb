// The build (docs/architecture.md, data path step 7): once capture is
// installed, a drain thread claims a backfilling transform and builds it one
// short transaction at a time. A 1-1 target (an aggregate's ledger) is
// written by key ranges, one set-based statement per range, and an
// aggregate's groups by ranges of the ledger's group index, while drains
// park the keys they read; the parked keys are then re-derived with the
// drain's statements before the transform goes live. Field builds, ranges
// that fail with a data error and transforms holding keys go by keyset
// chunks through the drain's own re-derive statements (lock, then derive:
// invariant I1).
#pragma once

#include <map>

#include "apply/quarantine.hpp"
#include "apply/rederive.hpp"
#include "catalog/lifecycle.hpp"
#include "catalog/store.hpp"
#include "pg/connection.hpp"

namespace trellis::build {

struct BuildConfig {
  int chunk_rows = 5000;      // keys per keyset chunk (I8)
  int range_rows = 50000;     // source rows per range statement
  int discharge_keys = 5000;  // parked keys re-derived per transaction
};

class Builder {
 public:
  Builder(catalog::Store& store, BuildConfig config);
  // Claims a backfilling transform (or keeps the one this connection owns)
  // and runs one range or chunk. Returns false when there was nothing to
  // build.
  bool build_one_chunk(pg::Connection& conn);

 private:
  // The chunk this connection's claim is at, its page filled.
  struct Chunk {
    catalog::BuildPhase phase = catalog::BuildPhase::source;
    pg::Param upper;  // the chunk's last key (group); nothing on the phase's last chunk
    // The phase after this chunk (none when the build is done).
    std::optional<catalog::BuildPhase> next;
    apply::TransformWork work;
  };
  // Waits (briefly) for the fence of a phase that needs one; false when it
  // has not passed yet.
  bool fence_passed(pg::Connection& conn, int id);
  // One range of a ranges or group_ranges phase; false when this step must be a keyset chunk
  // instead (the transform holds keys, or the range failed with a data
  // error, whose key the chunk path finds and charges).
  bool run_range(pg::Connection& conn, const catalog::TransformDef& def);
  std::optional<Chunk> fill_chunk(pg::Connection& conn, const catalog::TransformDef& def);
  void run_chunk(pg::Connection& conn, const catalog::TransformDef& def);

  catalog::Store& store_;
  BuildConfig config_;
  catalog::BuildStatements sql_;
  apply::Rederiver rederiver_;
  apply::Quarantine quarantine_;
  // Per transform: keyset chunks still to run before trying ranges again,
  // after a range failed with a data error.
  std::map<int, int> chunks_before_ranges_;
};

}  // namespace trellis::build
