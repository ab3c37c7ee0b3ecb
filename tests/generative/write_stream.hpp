// Random write streams: each writer is its own connection running random
// single- and multi-statement transactions over the source tables (inserts,
// upserts, updates that move rows between groups or set NULLs, key changes,
// deletes by key and by group, no-op and scale-only updates, rollbacks, a rare TRUNCATE).
// Errors the application would see (unique clashes, deadlocks between
// writers, a restarting server) roll back or reconnect and go on.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "generative/random_schema.hpp"

namespace trellis::gen {

// One random transaction (possibly several statements) over the schema.
std::string random_write(Rng& rng, const Schema& schema);

// Writers running in the background; each draws from its own seed.
class WriteStream {
 public:
  WriteStream(std::string url, const Schema& schema, std::vector<uint64_t> seeds, int ops_each);
  ~WriteStream();  // joins
  void join();
  int done() const { return done_.load(); }
  int total() const { return total_; }
  int failed() const { return failed_.load(); }
  bool finished() const { return finished_.load() == static_cast<int>(threads_.size()); }

 private:
  void run(uint64_t seed);

  std::string url_;
  const Schema& schema_;
  int ops_each_;
  int total_;
  std::atomic<int> done_{0};
  std::atomic<int> failed_{0};
  std::atomic<int> finished_{0};
  std::vector<std::thread> threads_;
};

}  // namespace trellis::gen
