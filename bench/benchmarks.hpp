// The benchmarks of the harness, one per file; each runs its configurations
// side by side and reports one JSON line per configuration through the Run.
#pragma once

#include "common.hpp"

namespace trellis::bench {

void write_tax(Run& run);
void throughput(Run& run);
void latency(Run& run);
void build(Run& run);
void refresh(Run& run);
void idle(Run& run);
void memory(Run& run);
void join_fanout(Run& run);
void self_check(Run& run);

// The in-backend measure's fixture over `src`: the bare key-only statement
// trigger (its triggers named key_ring_*) and the procedure write_loop(kind,
// n). `trellis_bench sql` prints it, so scripts/capture_profile.sh profiles
// the very loops the benchmark times.
std::string write_tax_fixture_sql();

}  // namespace trellis::bench
