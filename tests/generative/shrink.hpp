// Shrinking a failing generative episode: reductions of the generated
// structure (drop a transform with its readers and the steps that mention
// it, drop an unread table, drop a burst with its quiesce, any step but the
// last quiesce, a fault; fewer writers, fewer transactions per writer and
// fewer starting rows by halving; fewer worker processes and drain
// threads), each candidate run in a fresh database like a normal episode
// and kept when it still fails. A shrink path (the kept reductions, comma
// separated) re-applies deterministically to the seed's generated episode,
// so TRELLIS_GEN_SEED=S TRELLIS_GEN_SHRINK_PATH=P replays the shrunk
// episode. Tokens (steps, faults and workers are 1-based, numbered as the
// plan prints them at that point of the path):
//   drop:d1      transform d1, its readers, and the steps that mention them
//   table:s2     table s2 (no transform reads it), its rows and TRUNCATEs
//   step:9       step 9
//   fault:7.2    fault 2 of step 7 (a burst)
//   writers:7=1  step 7's writers
//   txns:7=12    transactions per writer in step 7
//   rows:s1=10   the first 10 starting rows of s1
//   worker:2     worker process 2 of those started at the beginning
//   drains:1=0   drain threads of worker process 1 at the beginning
// A failure counts when it is the original's (ShrinkOptions::match): by
// default the same complaint about the same transform, so the shrink does
// not drift to a different failure.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "generative/episode.hpp"

namespace trellis::gen {

// Applies one reduction token; false when it does not apply to `g` (out of
// range, or it would leave no table). Throws std::invalid_argument on a
// malformed token.
bool apply_reduction(Generated& g, const std::string& token);
// Applies a whole shrink path (and records it in g.shrink_path); throws
// std::invalid_argument naming the token that does not apply or the plan it
// leaves invalid.
void apply_shrink_path(Generated& g, const std::string& path);
// "" when the plan can run as written (every define finds its upstream
// live, PAUSE/RESUME/DROP/ALTER find their transform in the state they
// need, a staging worker and a drain thread at the start, a quiesce last),
// else why not.
std::string plan_problem(const Generated& g);

// The transform a failure names first (e.g. "d1"), "" when none.
std::string failing_transform(const Outcome& outcome);
// The first line of what went wrong, digits masked ("RESUME TRANSFORM d#
// failed: ... which is waiting_to_backfill and not live; ...").
std::string failure_signature(const Outcome& outcome);

// Which failures of a candidate count as the original's.
enum class Match {
  same_failure,    // the same signature (so the same transform and the same complaint)
  same_transform,  // names the same transform (any failure when the original names none)
  any              // any failure
};

struct ShrinkOptions {
  std::chrono::seconds budget{300};  // for the whole shrink, reproduction included
  int replays = 3;                   // tries to reproduce the original failure
  int tries = 2;                     // a candidate fails when it fails within this many runs
  Match match = Match::same_failure;
};

struct ShrinkHooks {
  // Runs an episode in a fresh database; `run` numbers the runs of this
  // shrink (for log names).
  std::function<Outcome(const Generated& g, int run)> run;
  // Called for each failing run's outcome that is not (or no longer) the
  // smallest failure, so its worker log can go.
  std::function<void(const Outcome& superseded, int run)> discard;
  std::function<void(const std::string& line)> print;
};

struct ShrinkResult {
  bool reproduced = false;
  int replays = 0;     // replays of the original spent reproducing it
  int candidates = 0;  // candidates tried (valid reductions that ran)
  int runs = 0;        // episodes run, replays included
  int kept = 0;        // reductions kept (tokens in smallest.shrink_path)
  bool out_of_time = false;
  double seconds = 0;
  std::string original_size;  // how big the original episode was
  Generated smallest;         // the smallest failing episode found
  Outcome failure;            // its failure
  int failure_run = 0;        // the run that produced `failure` (0: the original)
};

ShrinkResult shrink(const Generated& original, const Outcome& original_failure,
                    const ShrinkOptions& options, const ShrinkHooks& hooks);

// The report of a shrink: how it went, the replay command line (`exe` is
// the test binary), and the shrunk episode with its failure report.
std::string describe_shrink(const ShrinkResult& r, const std::string& exe);

}  // namespace trellis::gen
