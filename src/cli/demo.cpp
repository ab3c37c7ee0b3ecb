// `trellis demo`: on a throwaway cluster, sample tables, transforms, live writes, and checks.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <thread>

#include "catalog/store.hpp"
#include "cli/commands.hpp"
#include "cli/signals.hpp"
#include "cli/status_view.hpp"
#include "cli/text_table.hpp"
#include "compile/oracle.hpp"
#include "pg/connection.hpp"
#include "testkit/cluster.hpp"

namespace trellis::cli {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kCustomers = 500;
constexpr int kOrders = 5000;
constexpr auto kWriteFor = 3s;
constexpr auto kLiveTimeout = 20s;
constexpr auto kConvergeTimeout = 20s;

const char* kOrderView =
    "TRANSFORM order_view FROM orders SELECT amount * 1.2 AS amount_with_tax, upper(status) AS "
    "status_label WHERE status <> 'cancelled'";
const char* kCustomerView =
    "TRANSFORM customer_view FROM customers SELECT name || ' (' || country || ')' AS label, "
    "country IN ('NL', 'DE', 'FR') AS in_eu";
const char* kCustomerTotals =
    "TRANSFORM customer_totals FROM orders GROUP BY customer_id SELECT COUNT(*) AS orders, "
    "SUM(amount) AS total, MAX(amount) AS largest WHERE status <> 'cancelled'";
const char* kOrderCustomers =
    "TRANSFORM order_customers FROM orders o JOIN customers c ON c.id = o.customer_id SELECT "
    "c.name AS customer, c.country AS country, o.amount AS amount";
const char* kRevenueByCountry =
    "TRANSFORM revenue_by_country FROM orders o JOIN customers c ON c.id = o.customer_id GROUP "
    "BY c.country SELECT COUNT(*) AS orders, SUM(o.amount) AS revenue WHERE o.status <> "
    "'cancelled'";
const char* kBigOrders =
    "TRANSFORM big_orders FROM order_view SELECT round(amount_with_tax) AS rounded_amount, "
    "lower(status_label) AS status WHERE amount_with_tax >= 1000";

struct Interrupted {};

struct WriteStats {
  int transactions = 0;
  int64_t inserts = 0;
  int64_t updates = 0;
  int64_t cancelled = 0;
  int64_t deletes = 0;
};

class Demo {
 public:
  Demo(const GlobalOptions& global, StopSignals& signals) : global_(global), signals_(signals) {}
  int run();

 private:
  void say(const std::string& line) {
    double t = std::chrono::duration<double>(Clock::now() - start_).count();
    std::cout << fmt::format("[{:5.1f}s] {}", t, line) << std::endl;
  }
  void pause_for(std::chrono::milliseconds d) {
    if (signals_.wait_for(d)) throw Interrupted{};
  }
  void create_sample_data();
  void apply(const std::string& statement, const std::string& note = "");
  bool wait_live(const std::vector<std::string>& targets);
  WriteStats stream_writes();
  void show_rows(const std::string& target, int limit);
  bool check_target(const std::string& target);

  const GlobalOptions& global_;
  StopSignals& signals_;
  Clock::time_point start_ = Clock::now();
  std::unique_ptr<testkit::Cluster> cluster_;
  std::string url_;
  std::unique_ptr<pg::Connection> app_;
  std::unique_ptr<Trellis> trellis_;
};

void Demo::create_sample_data() {
  app_->exec_script(fmt::format(
      "CREATE TABLE customers (id int PRIMARY KEY, name text, country text);"
      "CREATE TABLE orders (id bigint PRIMARY KEY, customer_id int, amount numeric(12,2), "
      "status text);"
      "CREATE INDEX ON orders (customer_id);"
      "INSERT INTO customers SELECT g, 'Customer ' || g, "
      "(ARRAY['NL','DE','FR','US','JP'])[1 + g % 5] FROM generate_series(1, {}) g;"
      "INSERT INTO orders SELECT g, 1 + (g * 7) % {}, round((5 + (g * 37) % 990) + "
      "(g % 100) / 100.0, 2), (ARRAY['new','paid','shipped','cancelled'])[1 + g % 4] "
      "FROM generate_series(1, {}) g;"
      "ANALYZE customers; ANALYZE orders",
      kCustomers, kCustomers, kOrders));
}

void Demo::apply(const std::string& statement, const std::string& note) {
  say("apply" + note + ": " + statement);
  auto applied = trellis_->apply(statement);
  say(fmt::format("  -> {} {}: {}", applied.kind, applied.target, applied.status));
}

// Polls status, printing each change, until every target is live.
bool Demo::wait_live(const std::vector<std::string>& targets) {
  std::map<std::string, std::string> last;
  std::set<std::string> live;
  for (const auto& t : targets) last[t] = word(Lifecycle::waiting_to_backfill);
  auto deadline = Clock::now() + kLiveTimeout;
  while (Clock::now() < deadline) {
    bool all_live = true;
    for (const auto& t : targets) {
      auto s = trellis_->status(t);
      std::string now = s ? s->status : "(gone)";
      if (now != last[t]) {
        bool building = s && s->is(Lifecycle::backfilling);
        std::string extra = building ? " (" + build_progress(*s) + ")" : "";
        say(fmt::format("{}: {}{}", s ? s->target : t, now, extra));
        for (const auto& d : s ? describe_status(*s) : std::vector<std::string>{})
          if (!building) say("  " + d);
        last[t] = now;
      }
      bool is_live = s && s->is(Lifecycle::live);
      if (is_live)
        live.insert(t);
      else
        live.erase(t);
      all_live = all_live && is_live;
    }
    if (all_live) return true;
    pause_for(20ms);
  }
  for (const auto& t : targets)
    if (!live.count(t)) {
      say(fmt::format("{} is still {} after {} s:", t, last[t], kLiveTimeout.count()));
      if (auto s = trellis_->status(t))
        for (const auto& d : describe_status(*s)) say("  " + d);
    }
  return false;
}

// Inserts, updates (some to 'cancelled', which removes rows from order_view)
// and deletes from a second, plain connection, as an application would.
WriteStats Demo::stream_writes() {
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
  WriteStats stats;
  std::thread writer([&] {
    try {
      auto conn = pg::Connection::open(url_, {.search_path = "public"});
      std::mt19937 rng(42);
      int64_t next_id = kOrders + 1;
      auto pick = [&](int64_t hi) { return std::uniform_int_distribution<int64_t>(1, hi)(rng); };
      const char* statuses[] = {"new", "paid", "shipped"};
      while (!stop) {
        pg::Transaction txn(*conn);
        for (int i = 0; i < 2; ++i) {
          stats.inserts += conn->exec(
                                   "INSERT INTO orders VALUES ($1::bigint, $2::int, "
                                   "$3::numeric, $4)",
                                   {std::to_string(next_id++), std::to_string(pick(kCustomers)),
                                    fmt::format("{}.{:02d}", pick(999), pick(99)),
                                    std::string(statuses[pick(3) - 1])})
                               .affected();
          stats.updates +=
              conn->exec("UPDATE orders SET amount = amount + 10 WHERE id = $1::bigint",
                         {std::to_string(pick(next_id - 1))})
                  .affected();
        }
        auto cancelled = conn->exec(
                                 "UPDATE orders SET status = 'cancelled' WHERE id = $1::bigint "
                                 "AND status <> 'cancelled'",
                                 {std::to_string(pick(next_id - 1))})
                             .affected();
        stats.cancelled += cancelled;
        stats.updates += cancelled;
        if (stats.transactions % 2 == 0)
          stats.deletes += conn->exec("DELETE FROM orders WHERE id = $1::bigint",
                                      {std::to_string(pick(next_id - 1))})
                               .affected();
        if (stats.transactions % 5 == 0)
          stats.updates += conn->exec("UPDATE customers SET country = $2 WHERE id = $1::int",
                                      {std::to_string(pick(kCustomers)),
                                       std::string(pick(2) == 1 ? "NL" : "US")})
                               .affected();
        txn.commit();
        ++stats.transactions;
        std::this_thread::sleep_for(2ms);
      }
    } catch (...) {
      failure = std::current_exception();
    }
  });
  bool interrupted = signals_.wait_for(kWriteFor);
  stop = true;
  writer.join();
  if (interrupted) throw Interrupted{};
  if (failure) std::rethrow_exception(failure);
  return stats;
}

void Demo::show_rows(const std::string& target, int limit) {
  auto rows = app_->exec(fmt::format("SELECT * FROM {} ORDER BY 1 LIMIT {}", target, limit));
  std::vector<std::string> header;
  std::vector<int> shown;  // Trellis's hidden "__" columns are left out
  for (int c = 0; c < rows.columns(); ++c)
    if (rows.column_name(c).rfind("__", 0) != 0) {
      header.push_back(rows.column_name(c));
      shown.push_back(c);
    }
  TextTable table(header);
  for (int r = 0; r < rows.rows(); ++r) {
    std::vector<std::string> cells;
    for (int c : shown) cells.push_back(rows.is_null(r, c) ? "NULL" : rows.get(r, c));
    table.add_row(cells);
  }
  std::cout << "\n" << target << " (first " << limit << " rows):\n" << table.render();
}

// The target against its definition run as a plain SELECT (the oracle).
bool Demo::check_target(const std::string& target) {
  auto conn = pg::Connection::open(url_);
  catalog::Store store(global_.schema);
  auto dot = target.find('.');
  auto def = store.transform(*conn, target.substr(0, dot), target.substr(dot + 1));
  if (!def) throw Error(ErrorCode::not_found, "no transform " + target + " in the catalog");
  auto count = conn->exec(fmt::format("SELECT count(*) FROM {}", target)).get_int(0, 0);
  auto diff = conn->exec(compile::oracle_diff_sql(*def, 10));
  std::cout << fmt::format("  {:<26} {:>6} rows  matches its definition: {}\n", target, count,
                           diff.rows() == 0 ? "yes" : "NO");
  for (int i = 0; i < diff.rows(); ++i)
    std::cout << fmt::format("      {} {}\n", diff.get(i, 0), diff.get(i, 1));
  return diff.rows() == 0;
}

int Demo::run() {
  std::cout << "trellis demo: a throwaway PostgreSQL, two sample tables, four transforms, live "
               "writes, then a check of every target against its definition.\n\n";
  say("starting a throwaway PostgreSQL 15 cluster ...");
  cluster_ = testkit::Cluster::start(testkit::ClusterOptions{});  // keep = false: removed at exit
  url_ = cluster_->create_database("demo");
  app_ = pg::Connection::open(url_, {.search_path = "public"});
  create_sample_data();
  say(fmt::format("ready in {}; sample tables customers ({} rows) and orders ({} rows)",
                  cluster_->dir(), kCustomers, kOrders));

  Options options = handle_options(global_);
  options.url = url_;
  options.target_schema = "public";
  options.staging = true;
  options.drain_threads = 2;
  options.pool_size = 4;
  options.tick = 50ms;
  trellis_ = Trellis::connect(options);
  say("trellis started in this process: staging worker + 2 drain threads");

  apply(kOrderView);
  apply(kCustomerView);
  apply(kCustomerTotals, " (aggregate)");
  apply(kOrderCustomers, " (join: each order with its customer)");
  apply(kRevenueByCountry, " (aggregate over a join)");
  if (!wait_live({"public.order_view", "public.customer_view", "public.customer_totals",
                  "public.order_customers", "public.revenue_by_country"}))
    return kExitError;
  apply(kBigOrders, " (chained: reads order_view)");
  if (!wait_live({"public.big_orders"})) return kExitError;

  say(fmt::format("streaming writes into orders and customers for {} s from a second connection",
                  kWriteFor.count()));
  auto stats = stream_writes();
  say(fmt::format("wrote {} transactions: {} inserts, {} updates ({} to 'cancelled'), {} deletes",
                  stats.transactions, stats.inserts, stats.updates, stats.cancelled,
                  stats.deletes));

  auto token = trellis_->watermark_token();
  auto wait_start = Clock::now();
  say("took a watermark token; await_converged ...");
  if (!trellis_->await_converged(token, kConvergeTimeout)) {
    say(fmt::format("NOT converged within {} s; status now:", kConvergeTimeout.count()));
    std::cout << render_status_table(
        trellis_->status_all(),
        {trellis_->has_live_staging_worker(), trellis_->has_live_drain_workers()}, global_.schema);
    return kExitError;
  }
  say(fmt::format("converged {:.2f} s after the last write",
                  std::chrono::duration<double>(Clock::now() - wait_start).count()));

  show_rows("public.order_view", 5);
  show_rows("public.big_orders", 3);
  show_rows("public.customer_totals", 3);
  show_rows("public.order_customers", 3);
  show_rows("public.revenue_by_country", 5);
  std::cout << "\nchecks (each target against its definition run as a plain SELECT):\n";
  bool ok = true;
  for (const char* t : {"public.order_view", "public.customer_view", "public.customer_totals",
                        "public.order_customers", "public.revenue_by_country", "public.big_orders"})
    ok = check_target(t) && ok;
  std::cout << std::endl;
  trellis_->shutdown();
  say(ok ? "done; removing the cluster"
         : "a target differs from its definition; removing the cluster");
  return ok ? kExitOk : kExitError;
}

int run_demo(const GlobalOptions& global) {
  StopSignals signals;
  if (!global.verbose) spdlog::set_level(spdlog::level::warn);  // keep the story readable
  if (!global.database_url.empty())
    spdlog::warn("the demo runs on its own throwaway cluster; --database-url is ignored");
  if (global.target_schema != "public")
    spdlog::warn("the demo always creates its targets in schema public");
  Demo demo(global, signals);
  try {
    return demo.run();
  } catch (const Interrupted&) {
    std::cout << "\ninterrupted (" << signals.name() << "); stopping and removing the cluster"
              << std::endl;
    return kExitError;
  }
}

}  // namespace

Command add_demo_command(CLI::App& app, const GlobalOptions& global) {
  auto* sub = app.add_subcommand(
      "demo",
      "a short tour on a throwaway cluster: sample tables, transforms, live writes, checks");
  return {sub, [&global] { return run_demo(global); }};
}

}  // namespace trellis::cli
