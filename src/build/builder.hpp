// The build (docs/architecture.md, data path step 7): once capture is installed, a drain thread
// claims a backfilling transform and re-derives its source keys in key-range chunks, each a short
// transaction using the drain's own re-derive statements.
#pragma once

#include "apply/quarantine.hpp"
#include "apply/rederive.hpp"
#include "catalog/lifecycle.hpp"
#include "catalog/store.hpp"
#include "pg/connection.hpp"

namespace trellis::build {

struct BuildConfig {
  int chunk_rows = 5000;
};

class Builder {
 public:
  Builder(catalog::Store& store, BuildConfig config);
  // Claims a backfilling transform (or keeps the one this connection owns)
  // and runs one chunk. Returns false when there was nothing to build.
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
  std::optional<Chunk> fill_chunk(pg::Connection& conn, const catalog::TransformDef& def);
  void run_chunk(pg::Connection& conn, const catalog::TransformDef& def);

  catalog::Store& store_;
  BuildConfig config_;
  catalog::BuildStatements sql_;
  apply::Rederiver rederiver_;
  apply::Quarantine quarantine_;
};

}  // namespace trellis::build
