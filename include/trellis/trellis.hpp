// The C++ facade of Trellis (README, "Running against your database"). A Trellis handle serves
// calls against one instance (catalog schema + target schema) and, when asked, runs the staging
// worker and drain threads in the background.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trellis/error.hpp"
#include "trellis/status.hpp"

namespace trellis {

struct Options {
  std::string url;                       // libpq connection string or URI; empty: PG* variables
  std::string schema = "trellis";        // catalog schema of the instance
  std::string target_schema = "public";  // where unqualified targets are created
  bool staging = false;                  // run the (single) staging worker in this process
  int drain_threads = 0;                 // drain threads run by this process
  int pool_size = 4;                     // connections for API calls
  std::chrono::milliseconds call_deadline{30000};
  std::chrono::milliseconds tick{100};  // staging worker cadence (seal, fence, retire)
  // Source rows a build writes per range statement (one transaction each):
  // larger ranges build faster; each range holds back drains of other
  // transforms while it runs (docs/architecture.md, "Building by ranges").
  int build_range_rows = 50000;
  // Target rows a self-check compares per page (one snapshot each).
  int self_check_page_rows = 10000;
  // HOST:PORT to serve Prometheus metrics on at /metrics (port 0: a free
  // one, see metrics_port()); empty: not served.
  std::string metrics_address;
};

// What apply() did.
struct Applied {
  // transform | alter | pause | resume | drop | relationship | drop_relationship
  std::string kind;
  std::string target;  // schema.table (a relationship: schema.from_table.name)
  std::string status;  // status after the statement
  // ALTER TRANSFORM: the fields it actually added, dropped and re-expressed
  // (no-op clauses are left out; a field dropped and added back with another
  // expression is in both `added` and `dropped`).
  std::vector<std::string> added = {};
  std::vector<std::string> dropped = {};
  std::vector<std::string> altered = {};
  std::string note = {};  // a remark on what the statement did (ADOPT EXISTING TABLE: the extra
                          // columns and indexes it kept)
};

struct Definition {
  std::string target;     // schema.table
  std::string statement;  // the statement as normalised at define
  std::string shape;      // one_to_one | aggregate
  std::vector<std::string> sources;
  std::string status;
  // The halt that paused it (capture_failure of kind `halt`), if any.
  std::optional<CaptureFailure> halt;
  // Its fields frozen by PAUSE TRANSFORM t.col or the column fuse.
  std::vector<std::string> paused_columns;
};

// A relationship (RELATIONSHIP name FROM table.col TO table.col): a named
// link transforms read as `name.column`.
struct Relationship {
  std::string name;
  std::string from_table;  // schema.table
  std::string from_column;
  std::string to_table;  // schema.table
  std::string to_column;
  std::string cardinality;  // to_one | to_many
  std::string created_at;   // ISO 8601, UTC
};

// One source key held in quarantine for a transform (sample_quarantined).
struct QuarantinedKey {
  std::string table;  // schema.table of the source
  std::string key;    // JSON array of the key's column values as text; release_key takes it
  int charges = 0;    // failed re-derives
  std::string error;  // the last one's message
  std::string sqlstate;
  std::string held_at;
};

struct QuarantinePage {
  std::vector<QuarantinedKey> keys;
  std::string cursor;  // opaque: pass it back for the next page ("" = from the start)
};

// What test_reset() repaired (target names, schema.table).
struct TestResetReport {
  std::vector<std::string> disrupted;    // capture found disabled, dropped or replaced
  std::vector<std::string> resumed;      // paused by a failure or quarantined: resumed, rebuilt
  std::vector<std::string> rebuilt;      // running: rebuilt in place
  std::vector<std::string> left_paused;  // paused by PAUSE TRANSFORM: left so
  double seconds = 0;                    // how long the reset took
};

// An opaque position in the change stream; see watermark_token().
struct Token {
  int64_t segment = 0;
};

// What the ring holds now (ring_backlog()).
struct RingBacklog {
  int64_t rows = 0;   // changed keys captured and not yet drained
  int64_t bytes = 0;  // the ring's slot tables, indexes included
};

// How self_check() audits (README, "Auditing a target").
struct SelfCheckOptions {
  // standard: a difference is compared again after the drains catch up
  // once more, and reported only if it is still there (safe under live
  // writes); strict: reported at once (for a system with no writes).
  std::string mode = "standard";
  // How long each wait for the drains to catch up may take.
  std::chrono::milliseconds await_timeout{30000};
};

// One difference between a target and the recompute of its definition.
struct Divergence {
  // cell | missing_row | extra_row | missing_column | extra_column | capture
  std::string kind;
  std::string key;     // the row's key columns as a JSON object ("" when not a row)
  std::string column;  // cell, missing_column, extra_column
  std::optional<std::string> persisted;   // cell: the target's value as text (nullopt: NULL)
  std::optional<std::string> recomputed;  // cell: the definition's value as text
  std::string table;                      // capture: the table (schema.table)
  std::string detail;                     // capture: what is wrong and how to fix it
};

struct SelfCheckReport {
  std::string target;                    // schema.table
  std::string outcome;                   // converged | not_caught_up | not_live | diverged
  std::string status;                    // the transform's status, for not_live
  std::string detail;                    // why not_caught_up / not_live, in a sentence
  int64_t rows_compared = 0;             // keys seen on either side
  bool truncated = false;                // stopped before the last page
  std::optional<Token> checked_through;  // the token the target was caught up with
  std::vector<Divergence> divergences;   // at most 1,000, in page order
};

// A self-check runs as a job on the drain threads of any process.
struct SelfCheckJob {
  int64_t id = 0;
  std::string target;
  std::string mode;
  std::string state;                                // queued | running | done | failed | cancelled
  int64_t rows_compared = 0;                        // moves while it runs
  std::optional<SelfCheckReport> report;            // when done
  std::string error;                                // why failed or cancelled
  std::string created_at, started_at, finished_at;  // ISO 8601, UTC ("" until then)
  bool finished() const { return state == "done" || state == "failed" || state == "cancelled"; }
};

class Trellis {
 public:
  static std::unique_ptr<Trellis> connect(const Options& options);
  ~Trellis();
  Trellis(const Trellis&) = delete;
  Trellis& operator=(const Trellis&) = delete;

  Applied apply(const std::string& statement);
  std::optional<Status> status(const std::string& target);
  std::vector<Status> status_all();
  std::vector<Definition> definitions();
  // Every relationship, oldest first.
  std::vector<Relationship> relationships();
  // The instance's relationships and definitions as statements, in the
  // order that applies them: a script `trellis restore` (or apply) runs
  // against another database with the same tables (README, "Dump and
  // restore"). Names are schema-qualified; what an operator paused follows
  // as PAUSE statements, failure states as comments.
  std::string dump();

  // A token covering every change committed before this call.
  Token watermark_token();
  // Blocks until every change the token covers has reached every live target,
  // chained targets included. Returns false on timeout.
  bool await_converged(const Token& token, std::chrono::milliseconds timeout);
  // Blocks until the transform of `target` is built and caught up: its
  // status reads live and every change committed by then has reached the
  // targets. Returns its status then. await_converged does not wait for a
  // build (right after apply it may return while the target is empty); use
  // this after defining, resuming or rebuilding a transform. Throws
  // not_found for an unknown target, conflict when it is paused or
  // quarantined (it will not become live without a RESUME), timeout naming
  // its status and what holds it up.
  Status await_live(const std::string& target, std::chrono::milliseconds timeout);

  // Pages through the keys held in quarantine for `target`, `limit` at a
  // time; an empty page returns the cursor it was given.
  QuarantinePage sample_quarantined(const std::string& target, int limit,
                                    const std::string& cursor = "");
  // Re-derives a held key from its source row as it is now and stops holding
  // it. `table` is the source (schema.table or table), `key` as
  // sample_quarantined shows it (a bare value for a one-column key). Throws
  // not_found when the key is not held, conflict when it still fails.
  void release_key(const std::string& target, const std::string& table, const std::string& key);

  // Rebuilds, in place, every running transform that reads `table`
  // (schema.table or table): each re-derives every key while its target
  // stays readable, then is live again. Returns how many; throws not_found
  // when no running transform reads it.
  int request_backfill(const std::string& table);

  // For an application's test suite, after fixtures were loaded with
  // triggers disabled, tables swapped or truncated: checks capture now,
  // resumes every transform a failure paused (reinstalling capture),
  // rebuilds every other running one in place, and waits until all of them
  // are live and caught up. Needs running workers (validation error
  // otherwise); throws timeout naming what is not live in time.
  TestResetReport test_reset(std::chrono::milliseconds timeout = std::chrono::seconds(60));

  // Audits `target` against a recompute of its definition, in the
  // background: returns the queued job (or the target's unfinished one).
  // Throws not_found for an unknown target, validation for a target whose
  // source lacks the index its definition needs (unless it opted out with
  // WITHOUT SOURCE INDEX) or an unknown mode. Needs running drain threads.
  SelfCheckJob self_check(const std::string& target, const SelfCheckOptions& options = {});
  // The job now; nullopt once it is gone (its transform was dropped, or a
  // later self_check of the target replaced it).
  std::optional<SelfCheckJob> self_check_job(int64_t id);
  // Polls the job until it has finished; throws timeout (not_found when it
  // is gone).
  SelfCheckJob await_self_check(int64_t id, std::chrono::milliseconds timeout);

  // Prometheus text: what this process's workers counted and what the
  // catalog says now (README, "Metrics").
  std::string metrics_text();
  RingBacklog ring_backlog();
  // The port metrics are served on (Options::metrics_address); 0 when not.
  int metrics_port();

  bool has_live_staging_worker();
  bool has_live_drain_workers();

  // Stops the workers (if any) and closes every connection. Idempotent.
  void shutdown();

  struct Impl;  // internal state, defined inside the library

 private:
  explicit Trellis(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace trellis
