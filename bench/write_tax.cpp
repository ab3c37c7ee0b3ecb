// write_tax: what maintaining derived tables costs the application's writes.
// Two measures. In the backend: a procedure commits N single-row UPDATEs (N
// single-row INSERTs, N 100-row INSERTs) in a loop, timed against the same
// loop with no capture, for Trellis capture (workers stopped while it runs,
// so only the trigger is measured), a bare key-only statement trigger with
// transition tables, a hand-written row trigger keeping the aggregate
// synchronously, and pg_ivm when installed; reported as microseconds per
// statement (per row for the 100-row INSERT) over no capture, the best of
// three rounds run side by side. End to end: pgbench scripts (the same
// statements; 1 and 8 clients) against the same configurations, with
// Trellis's workers running ("trellis") or started only after the run
// ("capture_only"); reports TPS, the ratio to no capture, and WAL bytes per
// source row (measured until the targets converged). Between the two, a
// 20,000-row UPDATE after single-row ones in one session, against a fresh
// session (multi_row_after_single_rows). A 1-client pgbench run
// here mostly measures CPU wake-ups; 8 clients saturate the machine, drain
// included. In the backend only, the same source partitioned by hash into
// four ("none_partitioned", "capture_only_partitioned", each over the
// former): on a server whose statement triggers miss a MERGE's moved rows,
// its capture includes the row-level move guard, also timed switched off
// ("capture_only_partitioned_without_move_guard"). Quick mode: 2 s runs, 100k-row source, the
// 100-row script at 1 client only, 5,000 statements per loop.
#include <fmt/format.h>

#include <map>
#include <optional>

#include "base/sql_text.hpp"
#include "benchmarks.hpp"
#include "pgbench.hpp"
#include "worker.hpp"

namespace trellis::bench {

namespace {

constexpr int64_t kGroups = 100;

struct Script {
  std::string name;
  int rows_per_txn;
  std::string text;
};

std::vector<Script> scripts(int64_t rows) {
  return {
      {"update_1", 1,
       fmt::format("\\set id random(1, {})\nUPDATE src SET amount = amount + 1 WHERE id = :id;",
                   rows)},
      {"insert_1", 1,
       fmt::format("\\set g random(0, {})\nINSERT INTO src (grp, amount, note) VALUES (:g, 1.5, "
                   "'new');",
                   kGroups - 1)},
      {"insert_100", 100,
       fmt::format("INSERT INTO src (grp, amount, note) SELECT (random() * {})::int, 1.5, 'new' "
                   "FROM generate_series(1, 100);",
                   kGroups - 1)},
  };
}

// The floor a capture trigger is compared with: per statement, only the
// changed keys, straight from the transition tables, into a plain table (as
// the ring is).
const char* kKeyTriggerSql = R"(
CREATE TABLE key_ring (key text NOT NULL, op "char" NOT NULL);
CREATE FUNCTION key_ring_ins() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO key_ring SELECT n.id::text, 'i' FROM new_rows n;
  RETURN NULL;
END $$;
CREATE FUNCTION key_ring_upd() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO key_ring SELECT n.id::text, 'u' FROM new_rows n JOIN old_rows o USING (id)
    WHERE (n.grp, n.amount, n.note) IS DISTINCT FROM (o.grp, o.amount, o.note);
  RETURN NULL;
END $$;
CREATE FUNCTION key_ring_del() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO key_ring SELECT o.id::text, 'd' FROM old_rows o;
  RETURN NULL;
END $$;
CREATE TRIGGER key_ring_ins AFTER INSERT ON src REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION key_ring_ins();
CREATE TRIGGER key_ring_upd AFTER UPDATE ON src REFERENCING OLD TABLE AS old_rows
  NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION key_ring_upd();
CREATE TRIGGER key_ring_del AFTER DELETE ON src REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION key_ring_del();
)";

// The in-backend loop: $1 statements of one kind, each committed.
const char* kLoopSql = R"(
CREATE PROCEDURE write_loop(kind text, n int) LANGUAGE plpgsql AS $$
DECLARE
  top bigint := (SELECT max(id) FROM src);
BEGIN
  FOR i IN 1..n LOOP
    IF kind = 'update_1' THEN
      UPDATE src SET amount = amount + 1 WHERE id = 1 + (i::bigint * 7919) % top;
    ELSIF kind = 'insert_1' THEN
      INSERT INTO src (grp, amount, note) VALUES (i % 100, 1.5, 'new');
    ELSE
      INSERT INTO src (grp, amount, note) SELECT g % 100, 1.5, 'new' FROM generate_series(1, 100) g;
    END IF;
    COMMIT;
  END LOOP;
END $$;
)";

const char* kTriggerSql = R"(
CREATE TABLE trig_totals (grp int PRIMARY KEY, n bigint NOT NULL, total numeric NOT NULL);
INSERT INTO trig_totals SELECT grp, count(*), sum(amount) FROM src GROUP BY grp;
CREATE FUNCTION trig_totals_maintain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE trig_totals SET n = n - 1, total = total - OLD.amount WHERE grp = OLD.grp;
    DELETE FROM trig_totals WHERE grp = OLD.grp AND n = 0;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO trig_totals VALUES (NEW.grp, 1, NEW.amount)
      ON CONFLICT (grp) DO UPDATE SET n = trig_totals.n + 1, total = trig_totals.total + NEW.amount;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER trig_totals_maintain AFTER INSERT OR UPDATE OR DELETE ON src
  FOR EACH ROW EXECUTE FUNCTION trig_totals_maintain();
)";

// Rows that differ between a hand-maintained aggregate and its plain SELECT.
std::string aggregate_diff(Db& db, const std::string& table) {
  std::string plain =
      "SELECT grp, count(*)::bigint AS n, sum(amount) AS total FROM src GROUP BY grp";
  int64_t n = db.scalar(fmt::format(
      "SELECT count(*) FROM ((SELECT grp, n::bigint, total FROM {0} EXCEPT {1}) UNION ALL ({1} "
      "EXCEPT SELECT grp, n::bigint, total FROM {0})) d",
      table, plain));
  return n == 0 ? "" : fmt::format("{} rows of {} differ from the plain SELECT", n, table);
}

// One way of keeping (or not keeping) the aggregate: its database and how to check it.
struct Config {
  std::string name;
  bool partitioned = false;  // the source partitioned by hash (in-backend loops only)
  std::unique_ptr<Db> db;
  std::unique_ptr<Worker> worker;
  std::string skipped;
};

// "trellis" runs its worker (staging + one drain thread) during the pgbench
// run; "capture_only" has the same capture installed but starts its worker
// only after the run, to converge, so its TPS is the capture's cost alone
// without the drain competing for the machine.
bool uses_trellis(const Config& c) {
  return c.name == "trellis" || c.name.starts_with("capture_only");
}

// The configuration an in-backend loop is compared with.
std::string baseline_of(const Config& c) {
  return c.partitioned ? "none_partitioned" : "none";
}

std::unique_ptr<Worker> start_worker(Run& run, const Config& c) {
  return Worker::spawn(c.db->url(), 1, run.settings().tick,
                       run.scratch_dir() + "/wt_" + c.name + ".log");
}

void set_up(Run& run, Config& c, int64_t rows) {
  c.db = std::make_unique<Db>(run, "wt_" + c.name);
  create_source(*c.db, rows, kGroups, c.partitioned ? 4 : 0);
  if (uses_trellis(c)) {
    c.db->trellis().apply(one_to_one_shape().statement);
    c.db->trellis().apply(aggregate_shape(kGroups).statement);
    c.worker = start_worker(run, c);
    c.db->wait_live("src_view", std::chrono::seconds(600));
    c.db->wait_live("src_totals", std::chrono::seconds(600));
    if (c.name.starts_with("capture_only"))
      c.worker.reset();  // started again after each pgbench run
  } else if (c.name == "trigger") {
    c.db->sql(kTriggerSql);
  } else if (c.name == "key_trigger") {
    c.db->sql(kKeyTriggerSql);
  } else if (c.name == "pg_ivm") {
    // pg_ivm maintains an IMMV correctly only when its library is loaded
    // in every session (its README: shared_ or session_preload_libraries).
    c.db->sql(
        "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET session_preload_libraries = %L', "
        "current_database(), 'pg_ivm'); END $$; LOAD 'pg_ivm'");
    c.db->sql("CREATE EXTENSION pg_ivm");
    // pg_ivm 1.15 keeps its functions in schema pgivm, earlier ones in the
    // extension's schema.
    auto schema = c.db->app().exec(
        "SELECT n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE "
        "p.proname = 'create_immv' LIMIT 1");
    c.db->app().exec(fmt::format(
        "SELECT {}.create_immv('ivm_totals', 'SELECT grp, count(*) AS n, sum(amount) AS total "
        "FROM src GROUP BY grp')",
        base::ident(schema.get(0, 0))));
  }
  c.db->sql(kLoopSql);
  c.db->sql("CHECKPOINT");
}

std::string check(Config& c) {
  if (uses_trellis(c)) return oracle_all(*c.db, {"src_view", "src_totals"});
  if (c.name == "trigger") return aggregate_diff(*c.db, "trig_totals");
  if (c.name == "pg_ivm") return aggregate_diff(*c.db, "ivm_totals");
  return "";
}

// Reports `line` with the oracle check of `c`; capture_only first converges
// (its worker started for that only), so the check sees every change.
void report_converged(Run& run, Config& c, const json& line) {
  if (c.name.starts_with("capture_only")) {
    c.worker = start_worker(run, c);
    c.db->converge(std::chrono::seconds(600));
    c.worker.reset();
  }
  run.report("write_tax", line, check(c));
}

// The move guard Trellis put on a partitioned source (none on a server whose
// statement triggers see a MERGE's moved rows).
std::optional<std::string> move_guard_of(Config& c) {
  auto r = c.db->app().exec(
      "SELECT quote_ident(tgname) FROM pg_trigger WHERE tgrelid = 'src'::regclass AND tgname LIKE "
      "'trellis\\_%\\_move\\_%'");
  if (r.rows() == 0) return std::nullopt;
  return r.get(0, 0);
}

// Seconds the loop of `n` statements of `script` takes in `c`'s database.
double loop_seconds(Config& c, const std::string& script, int n) {
  return c.db->timed(fmt::format("CALL write_loop('{}', {})", script, n));
}

// The in-backend measure (see the header): for each script, three rounds
// over the configurations side by side; the best round of each.
void in_backend(Run& run, std::vector<Config>& configs) {
  int n = run.size(5000, 20000);
  for (const auto& s : scripts(0)) {
    int statements = s.rows_per_txn > 1 ? n / 10 : n;
    std::map<std::string, double> best;
    auto keep = [&](const std::string& name, double t) {
      if (!best.count(name) || t < best[name]) best[name] = t;
    };
    for (int round = 0; round < 3; ++round)
      for (auto& c : configs) {
        if (!c.skipped.empty() || c.name == "trellis") continue;
        keep(c.name, loop_seconds(c, s.name, statements));
        if (!c.partitioned || !uses_trellis(c)) continue;
        if (auto guard = move_guard_of(c)) {
          // The same capture with its move guard switched off for the loop
          // (it moves no row, so nothing goes unseen), to price the guard.
          c.db->sql("ALTER TABLE src DISABLE TRIGGER " + *guard);
          keep(c.name + "_without_move_guard", loop_seconds(c, s.name, statements));
          c.db->sql("ALTER TABLE src ENABLE ALWAYS TRIGGER " + *guard);
        }
      }
    for (auto& c : configs)
      for (const std::string& name : {c.name, c.name + "_without_move_guard"}) {
        if (!best.count(name)) continue;
        double us = best[name] * 1e6 / statements;
        std::string baseline = baseline_of(c);
        double none_us = best.count(baseline) ? best[baseline] * 1e6 / statements : 0;
        json line = {{"measure", "in_backend"},
                     {"config", name},
                     {"script", s.name},
                     {"statements", statements},
                     {"rounds", 3},
                     {"source", c.partitioned ? "partitioned" : "plain"},
                     {"us_per_statement", us},
                     {"extra_us_per_statement", us - none_us},
                     {"extra_us_per_row", (us - none_us) / s.rows_per_txn}};
        try {
          report_converged(run, c, line);
        } catch (const std::exception& e) {
          run.fail("write_tax", line, e.what());
        }
      }
  }
}

// A multi-row UPDATE in a session whose capture has so far seen only
// single-row statements, against the same UPDATE in a fresh session. The
// statements of a PL/pgSQL trigger are planned on their first call and the
// plan is kept for the session; the transition tables' row counts at that
// call are the planner's estimate, so a join of the old and new rows that
// may be planned as a nested loop (the bare trigger's inner join) becomes
// quadratic in the statement's rows. Trellis's capture pairs the rows with a
// FULL JOIN, which is planned as a hash or merge join whatever the estimate.
void multi_row_after_single_rows(Run& run, std::vector<Config>& configs) {
  const int rows = 20000;
  std::string update = fmt::format("UPDATE src SET amount = amount + 1 WHERE id <= {}", rows);
  for (auto& c : configs) {
    if (!c.skipped.empty() ||
        (c.name != "none" && c.name != "capture_only" && c.name != "key_trigger"))
      continue;
    json line = {{"measure", "multi_row_after_single_rows"},
                 {"config", c.name},
                 {"single_row_updates_before", 10},
                 {"rows", rows}};
    try {
      // Sessions as the application's are (the project's connections pin
      // search_path to pg_catalog alone).
      pg::SessionPins app_pins;
      app_pins.search_path = "public";
      app_pins.application_name = "bench";
      auto warmed = pg::Connection::open(c.db->url(), app_pins);
      warmed->exec("CALL write_loop('update_1', 10)");
      auto t0 = Clock::now();
      warmed->exec(update);
      line["seconds"] = seconds_since(t0);
      auto fresh = pg::Connection::open(c.db->url(), app_pins);
      t0 = Clock::now();
      fresh->exec(update);
      line["fresh_session_seconds"] = seconds_since(t0);
      report_converged(run, c, line);
    } catch (const std::exception& e) {
      run.fail("write_tax", line, e.what());
    }
  }
}

}  // namespace

std::string write_tax_fixture_sql() {
  return std::string(kKeyTriggerSql) + kLoopSql;
}

void write_tax(Run& run) {
  int64_t rows = run.size<int64_t>(100000, 1000000);
  int seconds = run.size(2, 20);
  std::vector<Config> configs;
  for (const char* name : {"none", "trellis", "capture_only", "key_trigger", "trigger", "pg_ivm",
                           "none_partitioned", "capture_only_partitioned"}) {
    configs.emplace_back();
    configs.back().name = name;
    configs.back().partitioned = configs.back().name.ends_with("_partitioned");
  }
  Db probe(run, "wt_probe");
  bool have_ivm =
      probe.scalar("SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_ivm'");
  for (auto& c : configs) {
    if (c.name == "pg_ivm" && !have_ivm) {
      c.skipped =
          "pg_ivm is not installed (no Debian package of it for PostgreSQL 15; build it from its "
          "source to compare)";
      run.emit("write_tax", {{"config", c.name}, {"skipped", c.skipped}});
      continue;
    }
    try {
      set_up(run, c, rows);
    } catch (const std::exception& e) {
      c.skipped = e.what();
      run.fail("write_tax", {{"config", c.name}, {"phase", "setup"}}, e.what());
    }
  }
  in_backend(run, configs);
  multi_row_after_single_rows(run, configs);
  for (const auto& s : scripts(rows)) {
    for (int clients : {1, 8}) {
      if (clients > 1 && s.rows_per_txn > 1 && !run.full())
        continue;  // quick: keeps the backlog small
      std::optional<double> base_tps;
      for (auto& c : configs) {
        if (!c.skipped.empty() || c.partitioned) continue;
        json line = {{"config", c.name},   {"script", s.name},    {"clients", clients},
                     {"seconds", seconds}, {"source_rows", rows}, {"groups", kGroups}};
        if (uses_trellis(c)) line["drain_threads"] = 1;
        try {
          int64_t wal0 = c.db->wal_bytes();
          auto r = pgbench(c.db->url(), {s.text, clients, seconds}, run.scratch_dir());
          if (c.name == "capture_only") c.worker = start_worker(run, c);
          if (uses_trellis(c)) line["converge_after_s"] = c.db->converge(std::chrono::seconds(600));
          if (c.name == "capture_only") c.worker.reset();
          int64_t wal1 = c.db->wal_bytes();
          int64_t source_rows = r.transactions * s.rows_per_txn;
          if (c.name == "none") base_tps = r.tps;
          line["tps"] = r.tps;
          line["latency_ms"] = r.latency_ms;
          line["failed_transactions"] = r.failed;
          line["source_rows_written"] = source_rows;
          line["wal_bytes_per_row"] = source_rows ? double(wal1 - wal0) / source_rows : 0.0;
          if (base_tps && *base_tps > 0) line["ratio_to_none"] = r.tps / *base_tps;
          run.report("write_tax", line, check(c));
        } catch (const std::exception& e) {
          run.fail("write_tax", line, e.what());
        }
      }
    }
  }
}

}  // namespace trellis::bench
