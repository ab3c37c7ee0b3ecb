// Run settings, cluster, result sink, per-configuration databases and the
// oracle check; see common.hpp.
#include "common.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "catalog/store.hpp"
#include "compile/oracle.hpp"
#include "trellis/error.hpp"

namespace trellis::bench {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Run::Run(Settings settings) : settings_(std::move(settings)) {
  if (!settings_.out_path.empty()) out_.open(settings_.out_path, std::ios::app);
}

Run::~Run() = default;

testkit::Cluster& Run::cluster() {
  if (!cluster_) {
    testkit::ClusterOptions o;
    // pg_stat_statements for the per-statement profiles; a large max_wal_size
    // so checkpoints do not land in the middle of a timed section.
    o.extra_conf =
        "shared_preload_libraries = 'pg_stat_statements'\n"
        "pg_stat_statements.track = all\n"
        "max_wal_size = '8GB'\n"
        "checkpoint_timeout = '30min'\n";
    for (const auto& setting : settings_.server_settings) o.extra_conf += setting + "\n";
    if (settings_.explain_ms > 0) {
      o.keep = true;
      o.extra_conf += fmt::format(
          "session_preload_libraries = 'auto_explain'\n"
          "auto_explain.log_min_duration = '{}ms'\n"
          "auto_explain.log_analyze = on\n"
          "auto_explain.log_nested_statements = on\n",
          settings_.explain_ms);
    }
    cluster_ = testkit::Cluster::start(o);
    if (o.keep) std::cerr << "# plans go to " << cluster_->dir() << "/server.log" << std::endl;
  }
  return *cluster_;
}

std::string Run::scratch_dir() {
  std::string dir = cluster().dir() + "/bench";
  ::mkdir(dir.c_str(), 0777);
  ::chmod(dir.c_str(), 0777);
  return dir;
}

void Run::emit(const std::string& benchmark, json line) {
  json out = {{"benchmark", benchmark}, {"mode", full() ? "full" : "quick"}};
  out.update(line);
  if (!out.contains("ok")) out["ok"] = true;
  std::string text = out.dump();
  std::cout << text << std::endl;
  if (out_.is_open()) out_ << text << std::endl;
}

void Run::fail(const std::string& benchmark, json config, const std::string& why) {
  ++failures_;
  config["ok"] = false;
  config["error"] = why.size() > 2000 ? why.substr(0, 2000) : why;
  emit(benchmark, config);
}

void Run::report(const std::string& benchmark, json line, const std::string& oracle_diff) {
  if (oracle_diff.empty())
    emit(benchmark, std::move(line));
  else
    fail(benchmark, std::move(line), "oracle: " + oracle_diff);
}

Db::Db(Run& run, const std::string& prefix) {
  url_ = run.cluster().create_database(prefix);
  app_ = pg::Connection::open(url_, {.search_path = "public",
                                     .application_name = "bench",
                                     .lock_timeout = std::chrono::milliseconds(0)});
  app_->exec("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
}

Db::~Db() {
  if (trellis_) trellis_->shutdown();
}

int64_t Db::scalar(const std::string& query) {
  auto r = app_->exec(query);
  return r.rows() && !r.is_null(0, 0) ? r.get_int(0, 0) : 0;
}

double Db::scalar_double(const std::string& query) {
  auto r = app_->exec(query);
  return r.rows() && !r.is_null(0, 0) ? std::stod(r.get(0, 0)) : 0.0;
}

Trellis& Db::trellis() {
  if (!trellis_) {
    Options o;
    o.url = url_;
    o.pool_size = 2;
    trellis_ = Trellis::connect(o);
  }
  return *trellis_;
}

double Db::timed(const std::string& script) {
  auto t0 = Clock::now();
  app_->exec_script(script);
  return seconds_since(t0);
}

double Db::wait_live(const std::string& target, std::chrono::seconds timeout) {
  auto t0 = Clock::now();
  std::string last;
  while (Clock::now() - t0 < timeout) {
    auto s = trellis().status(target);
    last = s ? s->status : "(none)";
    if (last == "live") return seconds_since(t0);
    if (s && s->backfill_failure) last += " (backfill failure: " + s->backfill_failure->error + ")";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  throw Error(ErrorCode::internal,
              fmt::format("{} not live within {}s; last status {}", target, timeout.count(), last));
}

double Db::converge(std::chrono::seconds timeout) {
  auto t0 = Clock::now();
  auto token = trellis().watermark_token();
  if (!trellis().await_converged(token, timeout))
    throw Error(ErrorCode::internal, fmt::format("not converged within {}s", timeout.count()));
  return seconds_since(t0);
}

std::string Db::oracle_diff(const std::string& target) {
  auto conn = pg::Connection::open(url_);
  catalog::Store store("trellis");
  auto def = store.transform(*conn, "public", target);
  if (!def) return "no transform " + target;
  auto diff = conn->exec(compile::oracle_diff_sql(*def, 5));
  std::string out;
  for (int i = 0; i < diff.rows(); ++i) out += diff.get(i, 0) + " " + diff.get(i, 1) + "\n";
  return out;
}

int64_t Db::wal_bytes() {
  return scalar("SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint");
}

void create_source(Db& db, int64_t rows, int64_t groups, int partitions) {
  std::string leaves;
  for (int i = 0; i < partitions; ++i)
    leaves += fmt::format(
        "CREATE TABLE src_p{0} PARTITION OF src FOR VALUES WITH (MODULUS {1}, REMAINDER {0});", i,
        partitions);
  db.sql(fmt::format(
      "CREATE TABLE src (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, grp int NOT "
      "NULL, amount numeric(12,2) NOT NULL, note text){2};{3}"
      "INSERT INTO src (id, grp, amount, note) SELECT g, g % {1}, (g % 1000) / 7.0, md5(g::text) "
      "FROM generate_series(1, {0}) g;"
      "SELECT setval(pg_get_serial_sequence('src', 'id'), {0});"
      "CREATE INDEX src_grp ON src (grp)",
      rows, groups, partitions ? " PARTITION BY HASH (id)" : "", leaves));
  db.sql("VACUUM ANALYZE src");
}

Shape one_to_one_shape() {
  return {
      "one_to_one",
      100,
      "src_view",
      "TRANSFORM src_view FROM src SELECT grp AS grp, amount * 2 AS twice, left(note, 8) AS tag",
      "SELECT id, grp, amount * 2 AS twice, left(note, 8) AS tag FROM src",
      "id",
      {"grp", "twice", "tag"},
      ""};
}

Shape aggregate_shape(int64_t groups) {
  return {fmt::format("groups_{}", groups),
          groups,
          "src_totals",
          "TRANSFORM src_totals FROM src GROUP BY grp SELECT COUNT(*) AS n, SUM(amount) AS total",
          "SELECT grp, count(*) AS n, sum(amount) AS total FROM src GROUP BY grp",
          "grp",
          {"n", "total"},
          ""};
}

namespace {

std::string join_setup(int64_t groups) {
  return fmt::format(
      "CREATE TABLE region_dim (id int PRIMARY KEY, name text NOT NULL);"
      "INSERT INTO region_dim SELECT g, 'region ' || g FROM generate_series(0, 9) g;"
      "CREATE TABLE grp_dim (id int PRIMARY KEY, label text NOT NULL, region int);"
      "INSERT INTO grp_dim SELECT g, 'group ' || g, g % 10 FROM generate_series(0, {} - 1) g;"
      "CREATE INDEX ON grp_dim (region); ANALYZE region_dim; ANALYZE grp_dim",
      groups);
}

}  // namespace

Shape join_one_to_one_shape(int64_t groups) {
  return {"join_one_to_one",
          groups,
          "src_joined",
          "TRANSFORM src_joined FROM src s JOIN grp_dim g ON g.id = s.grp LEFT JOIN region_dim r "
          "ON r.id = g.region SELECT g.label AS label, r.name AS region, s.amount * 2 AS twice",
          "SELECT s.id, g.label, r.name AS region, s.amount * 2 AS twice FROM src s JOIN grp_dim g "
          "ON g.id = s.grp LEFT JOIN region_dim r ON r.id = g.region",
          "id",
          {"label", "region", "twice"},
          join_setup(groups)};
}

Shape join_groups_shape(int64_t groups) {
  return {"join_groups",
          groups,
          "region_totals",
          "TRANSFORM region_totals FROM src s JOIN grp_dim g ON g.id = s.grp LEFT JOIN region_dim "
          "r ON r.id = g.region GROUP BY r.name AS region SELECT COUNT(*) AS n, SUM(s.amount) AS "
          "total",
          "SELECT r.name AS region, count(*) AS n, sum(s.amount) AS total FROM src s JOIN grp_dim "
          "g ON g.id = s.grp LEFT JOIN region_dim r ON r.id = g.region GROUP BY r.name",
          "region",
          {"n", "total"},
          join_setup(groups)};
}

Shape join_fanout_shape(int64_t groups) {
  return {"join_fanout",
          groups,
          "grp_rows",
          "TRANSFORM grp_rows FROM grp_dim g JOIN src s ON s.grp = g.id SELECT g.label AS label, "
          "s.amount * 2 AS twice",
          "SELECT g.id, s.id AS s_id, g.label, s.amount * 2 AS twice FROM grp_dim g JOIN src s ON "
          "s.grp = g.id",
          "id, s_id",
          {"label", "twice"},
          join_setup(groups)};
}

Shape join_fanout_kept_shape(int64_t groups) {
  return {"join_fanout_kept",
          groups,
          "grp_kept",
          "TRANSFORM grp_kept FROM grp_dim g LEFT JOIN src s ON s.grp = g.id SELECT g.label AS "
          "label, s.amount * 2 AS twice WHERE s.id IS NULL OR s.id % 4 <> 0",
          "SELECT g.id, s.id AS s_id, g.label, s.amount * 2 AS twice FROM grp_dim g LEFT JOIN src "
          "s ON s.grp = g.id WHERE s.id IS NULL OR s.id % 4 <> 0",
          "id, s_id",
          {"label", "twice"},
          join_setup(groups)};
}

std::vector<Shape> standard_shapes(const Run& run, int64_t rows) {
  std::vector<Shape> all{
      one_to_one_shape(),
      aggregate_shape(100),
      aggregate_shape(run.size<int64_t>(std::max<int64_t>(1, rows / 10), 100000)),
      join_one_to_one_shape(100),
      join_groups_shape(100),
      join_fanout_shape(rows / 10000 + 1),
      join_fanout_kept_shape(rows / 10000 + 1)};
  const auto& only = run.settings().shapes;
  if (only.empty()) return all;
  std::vector<Shape> chosen;
  for (auto& s : all)
    if (std::find(only.begin(), only.end(), s.name) != only.end()) chosen.push_back(std::move(s));
  return chosen;
}

void create_plain_copy(Db& db, const Shape& shape, const std::string& name) {
  db.sql(fmt::format("CREATE TABLE {0} AS {1}; ALTER TABLE {0} ADD PRIMARY KEY ({2})", name,
                     shape.select, shape.key));
  db.sql(fmt::format("VACUUM ANALYZE {}", name));
}

double plain_rewrite(Db& db, const Shape& shape, const std::string& name) {
  std::string sets;
  for (const auto& c : shape.columns)
    sets += fmt::format("{}{} = EXCLUDED.{}", sets.empty() ? "" : ", ", c, c);
  return db.timed(fmt::format("INSERT INTO {} {} ON CONFLICT ({}) DO UPDATE SET {}", name,
                              shape.select, shape.key, sets));
}

double update_backlog(Db& db, int64_t rows, int64_t batch) {
  auto t0 = Clock::now();
  for (int64_t lo = 1; lo <= rows; lo += batch)
    db.sql(fmt::format("UPDATE src SET amount = amount + 1 WHERE id BETWEEN {} AND {}", lo,
                       std::min(rows, lo + batch - 1)));
  return seconds_since(t0);
}

std::string oracle_all(Db& db, const std::vector<std::string>& targets) {
  std::string out;
  for (const auto& t : targets) {
    std::string d = db.oracle_diff(t);
    if (!d.empty()) out += t + ":\n" + d;
  }
  return out;
}

void reset_statements(Db& db) {
  db.app().exec("SELECT pg_stat_statements_reset()");
}

json top_statements(Db& db, int n, const std::string& order_by) {
  auto r = db.app().exec(fmt::format(
      "SELECT calls, round(total_exec_time::numeric, 1), round(mean_exec_time::numeric, 3), "
      "left(regexp_replace(query, '\\s+', ' ', 'g'), 160) FROM pg_stat_statements s JOIN "
      "pg_database d ON d.oid = s.dbid WHERE d.datname = current_database() AND query NOT LIKE "
      "'%pg_stat_statements%' ORDER BY {} DESC LIMIT {}",
      order_by, n));
  json out = json::array();
  for (int i = 0; i < r.rows(); ++i)
    out.push_back({{"calls", r.get_int(i, 0)},
                   {"total_ms", std::stod(r.get(i, 1))},
                   {"mean_ms", std::stod(r.get(i, 2))},
                   {"query", r.get(i, 3)}});
  return out;
}

}  // namespace trellis::bench
