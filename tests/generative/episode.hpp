// One generative episode: a seed becomes a schema, its starting rows, a
// program of transforms and a step list; the episode runs them against a
// fresh database with real worker processes and writers, injects the
// faults, and after every quiesce compares each target with its oracle.
// A failure comes back as a report holding the seed and the whole program,
// so the seed replays it (the generated program and steps are the same;
// thread interleavings and fault timing differ from run to run).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "generative/plan.hpp"
#include "generative/random_program.hpp"
#include "generative/random_schema.hpp"

namespace trellis::gen {

struct Generated {
  uint64_t seed = 0;
  Schema schema;
  std::vector<std::vector<std::string>> rows;  // starting rows: VALUES tuples per schema table
  Program program;
  Plan plan;
  // The reductions a shrink applied to the seed's episode ("" for none; see
  // shrink.hpp); part of the replay line.
  std::string shrink_path;
  std::string rows_sql() const;  // INSERT statements for the starting rows
  std::string describe() const;
  // The environment that regenerates this episode: TRELLIS_GEN_SEED=S, plus
  // the shrink path and the known-bugs setting when there are any.
  std::string replay_env() const;
};

Generated generate(uint64_t seed);

struct EpisodeHooks {
  std::string url;  // a fresh database
  // Differences between a target and its definition run as a plain SELECT.
  std::function<std::string(const std::string& target)> oracle_diff;
  std::function<void(bool immediate)> restart_server;
  std::string worker_log;  // where the worker processes write their logs
};

struct Outcome {
  std::string failure;  // "" when every quiesce matched the oracle, else the report
  std::string log;      // what ran: faults as they happened, quiesces
  int failed_step = 0;  // 1-based step that failed (0: setup), when failed
  std::string what;     // what went wrong in that step, when failed
};

// Runs the episode. At the end, with the workers stopped, it deletes one
// row of a target and requires the oracle to notice (the judge is live).
Outcome run_episode(const Generated& g, const EpisodeHooks& hooks);

}  // namespace trellis::gen
