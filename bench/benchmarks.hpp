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

}  // namespace trellis::bench
