// The step list of one generative episode: which worker processes start
// (staging tick = seal cadence, drain threads), then bursts of concurrent
// writes, each with faults fired part-way through (kill -9 of a worker
// mid-page, fast and immediate PostgreSQL restarts, a worker process
// joining, PAUSE, RESUME, DROP of a paused transform nothing reads (defined
// again after a later quiesce), ALTER TRANSFORM of a running 1-1 transform
// (a field added, or the one added before dropped), TRUNCATE, a define under
// writes, a partition detached and attached again or truncated), each
// followed by a quiesce where every target must equal its oracle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generative/random_program.hpp"
#include "generative/random_schema.hpp"
#include "generative/worker_process.hpp"

namespace trellis::gen {

struct Fault {
  enum class Kind {
    kill_worker,
    restart_fast,
    restart_immediate,
    join_worker,
    pause,
    resume,
    truncate,
    define,
    drop,
    alter,
    reattach_partition,  // DETACH [CONCURRENTLY] one partition, writes, ATTACH it again
    truncate_partition
  };
  Kind kind = Kind::kill_worker;
  int at_percent = 0;  // fires once this share of the burst's writes is done
  int target =
      0;  // worker pick (kill), transform (pause/resume/define/drop/alter), table (truncate)
  WorkerSpec spec;            // the joining worker, or the replacement of a killed one
  int partition = 0;          // reattach_partition, truncate_partition: which one of table `target`
  bool concurrently = false;  // reattach_partition: DETACH ... CONCURRENTLY
  std::string describe(const Schema& schema, const Program& program) const;
};

struct Step {
  enum class Kind { define, burst, quiesce };
  Kind kind = Kind::quiesce;
  int transform = -1;  // define
  int writers = 0;     // burst
  int ops_each = 0;
  uint64_t seed = 0;  // the writers' seeds derive from it
  std::vector<Fault> faults;
  std::vector<uint64_t> writer_seeds() const;
  std::string describe(const Schema& schema, const Program& program) const;
};

struct Plan {
  std::vector<WorkerSpec> workers;  // started before the first step
  std::vector<Step> steps;
  std::string describe(const Schema& schema, const Program& program) const;
};

// `rounds` bursts with their quiesces, then a last burst and quiesce.
Plan random_plan(Rng& rng, const Schema& schema, const Program& program, int rounds);
WorkerSpec random_worker(Rng& rng, bool staging);

}  // namespace trellis::gen
