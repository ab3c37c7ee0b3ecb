// Shared pieces of the benchmark harness: the run's settings (quick or full
// sizes), the throwaway cluster, a fresh database per configuration with the
// oracle check every configuration passes before it reports, and the sink
// that prints one JSON line per configuration.
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pg/connection.hpp"
#include "testkit/cluster.hpp"
#include "trellis/trellis.hpp"

namespace trellis::bench {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

double seconds_since(Clock::time_point start);

struct Settings {
  bool full = false;
  std::string out_path;                 // JSON lines are appended here as well as printed
  std::vector<std::string> only;        // benchmark names to run; empty: all
  std::chrono::milliseconds tick{100};  // staging cadence of the workers (the product default)
  // > 0: auto_explain logs the plans (with actual times) of statements slower
  // than this many ms to the server log, and the cluster directory is kept.
  int explain_ms = 0;
  // > 0: the source size of the benchmarks that take one (build,
  // throughput), instead of the mode's.
  int64_t rows = 0;
  // Names of the standard shapes to run (one_to_one, groups_100, ...); empty: all.
  std::vector<std::string> shapes;
  // Server settings (`name = value` lines) added to the cluster's
  // configuration, e.g. a production-sized shared_buffers.
  std::vector<std::string> server_settings;
};

// One run of the harness: its settings, its cluster (started on first use)
// and the result sink.
class Run {
 public:
  explicit Run(Settings settings);
  ~Run();

  const Settings& settings() const { return settings_; }
  bool full() const { return settings_.full; }
  template <class T>
  T size(T quick, T full) const {
    return settings_.full ? full : quick;
  }
  // The source size: --rows when given, else the mode's.
  int64_t source_rows(int64_t quick, int64_t full) const {
    return settings_.rows > 0 ? settings_.rows : size(quick, full);
  }
  testkit::Cluster& cluster();
  // A scratch directory inside the cluster's directory (removed with it).
  std::string scratch_dir();

  // Prints `line` (with "benchmark" and "mode" added) and appends it to the file.
  void emit(const std::string& benchmark, json line);
  // A configuration that failed (oracle difference, timeout, error): reported
  // as a JSON line with "ok": false and counted for the exit status.
  void fail(const std::string& benchmark, json config, const std::string& why);
  // Emits `line` when the oracle found no difference, else fails it.
  void report(const std::string& benchmark, json line, const std::string& oracle_diff);
  int failures() const { return failures_; }

 private:
  Settings settings_;
  std::unique_ptr<testkit::Cluster> cluster_;
  std::ofstream out_;
  int failures_ = 0;
};

// A fresh database for one configuration, with an application connection
// (no Trellis pins, search_path public) and, on first use, a Trellis handle
// without workers for apply / status / await (workers run in a child process,
// see worker.hpp, so their CPU and memory can be measured apart).
class Db {
 public:
  Db(Run& run, const std::string& prefix);
  ~Db();

  const std::string& url() const { return url_; }
  pg::Connection& app() { return *app_; }
  void sql(const std::string& script) { app_->exec_script(script); }
  int64_t scalar(const std::string& query);
  double scalar_double(const std::string& query);
  Trellis& trellis();

  // Time a statement (or script) takes, in seconds.
  double timed(const std::string& script);
  // Polls status until `target` is live; throws on timeout.
  double wait_live(const std::string& target, std::chrono::seconds timeout);
  // Takes a token now and waits until it converged; returns the seconds
  // waited, throws on timeout.
  double converge(std::chrono::seconds timeout);
  // Differences between the target and its definition ("" when equal).
  std::string oracle_diff(const std::string& target);
  // The current WAL insert position in bytes.
  int64_t wal_bytes();

 private:
  std::string url_;
  std::unique_ptr<pg::Connection> app_;
  std::unique_ptr<Trellis> trellis_;
};

// A source table `src(id, grp, amount, note)` of `rows` rows spread over
// `groups` values of grp, with an index on grp, analysed; with `partitions`,
// partitioned by HASH (id) into that many.
void create_source(Db& db, int64_t rows, int64_t groups, int partitions = 0);

// The transform shapes the benchmarks compare, over `src`.
struct Shape {
  std::string name;       // one_to_one | groups_<n>
  int64_t groups = 0;     // distinct grp values in the source (0 for one_to_one: 100)
  std::string target;     // target table
  std::string statement;  // TRANSFORM ...
  std::string select;     // the same result as a plain SELECT (for CTAS / materialized views)
  std::string key;        // the target's key column in the plain SELECT
  std::vector<std::string> columns;  // the other columns of the plain SELECT
  std::string setup;                 // SQL run after create_source (the joined tables), "" for none
};
Shape one_to_one_shape();
Shape aggregate_shape(int64_t groups);
// Over a snowflake join of src: grp_dim (id = src.grp, one row per group
// value) and region_dim (id = grp_dim.region, 10 rows). `join_one_to_one`:
// a 1-1 target of every source row with its dimension values;
// `join_groups`: revenue per region over the join.
Shape join_one_to_one_shape(int64_t groups);
Shape join_groups_shape(int64_t groups);
// `join_fanout`: grp_dim joined to the src rows of its group, a join that
// fans out (one target row per pair, keyed id, s_id).
Shape join_fanout_shape(int64_t groups);
// `join_fanout_kept`: the same as a LEFT JOIN under a WHERE over src that
// rejects a quarter of the matches, which are kept beside the target
// (docs/architecture.md, "Matches a WHERE rejects").
Shape join_fanout_kept_shape(int64_t groups);
// one_to_one, 100 groups, "many" groups (100k in full mode, rows / 10 in quick), and the
// four join shapes (join_fanout and join_fanout_kept with 10,000 source rows per dimension
// row); --shape picks.
std::vector<Shape> standard_shapes(const Run& run, int64_t rows);

// A plain table `name` holding the shape's SELECT, keyed like the target:
// what a set-based statement would maintain instead of Trellis.
void create_plain_copy(Db& db, const Shape& shape, const std::string& name);
// The floor: one set-based statement that rewrites `name` from the source
// (INSERT ... SELECT ... ON CONFLICT DO UPDATE). Returns its seconds.
double plain_rewrite(Db& db, const Shape& shape, const std::string& name);

// The source rows in transactions of `batch` rows: UPDATE src SET amount =
// amount + 1 over ids 1..rows. Returns the seconds taken.
double update_backlog(Db& db, int64_t rows, int64_t batch);

// Target rows read, to check a configuration's result before it reports:
// returns "" when every target equals its definition, else the differences.
std::string oracle_all(Db& db, const std::vector<std::string>& targets);

// Where the time went: pg_stat_statements of this database (reset by
// reset_statements()), the `n` statements first by `order_by` (a
// pg_stat_statements column), with their calls, total and mean milliseconds.
void reset_statements(Db& db);
json top_statements(Db& db, int n, const std::string& order_by = "total_exec_time");

}  // namespace trellis::bench
