// Runs self-check jobs on drain threads (README, "Auditing a target"). A job
// moves by short steps, one per call, each saved before the next, so no
// drain thread is held by a wait and a job whose backend dies is taken over
// where it stopped:
//
//   start          capture audit (a fault: `capture` divergences, done);
//                  not live: not_live; held keys: not_caught_up; the
//                  target's columns against the definition's; take a token
//   await          until the drains are through the token (and the
//                  segments their writes reached), else past the timeout:
//                  not_caught_up
//   compare        one page in one REPEATABLE READ snapshot; differences,
//                  in standard mode, take a fresh token and
//   recheck_await  wait for it, then
//   recheck        compare the same page again: only differences found
//                  alike each time (values and the target row's version)
//                  are kept; kRounds checks in all
//
// It reads; it never writes a target. At most 1,000 divergences are kept
// (then `truncated`).
#pragma once

#include <map>

#include "catalog/self_check_jobs.hpp"
#include "catalog/store.hpp"
#include "pg/connection.hpp"

namespace trellis::audit {

inline constexpr int kMaxDivergences = 1000;
// Standard mode: a page's differences are reported once found alike by
// this many checks, each after the drains caught up with a fresh token.
inline constexpr int kRounds = 3;
// A step failing this many times in a row (with errors that usually pass:
// a lock or serialization failure, a statement cancelled) fails the job.
inline constexpr int kRetries = 20;

class SelfCheckRunner {
 public:
  explicit SelfCheckRunner(catalog::Store& store, int page_rows = 10000);
  // Claims a job and runs one step of it. Returns whether it moved on (a
  // wait that is not over yet does not).
  bool step_one(pg::Connection& conn);

 private:
  bool run_step(pg::Connection& conn, catalog::SelfCheckJobRow& job);
  bool start(pg::Connection& conn, catalog::SelfCheckJobRow& job);
  bool await(pg::Connection& conn, catalog::SelfCheckJobRow& job);
  bool compare(pg::Connection& conn, catalog::SelfCheckJobRow& job, bool recheck);
  // Whether the transform can still be audited (same version, live, no held
  // keys, capture sound); when not, the job is finished saying why.
  std::optional<catalog::TransformDef> still_auditable(pg::Connection& conn,
                                                       catalog::SelfCheckJobRow& job);
  void await_token(pg::Connection& conn, catalog::SelfCheckJobRow& job, const std::string& step);

  catalog::Store& store_;
  catalog::SelfCheckJobs jobs_;
  int page_rows_;
  std::map<int64_t, int> retries_;  // job id -> steps failed in a row here
};

}  // namespace trellis::audit
