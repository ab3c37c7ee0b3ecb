// latency: commit-to-visible time under a fixed offered load. pgbench offers
// single-row updates at 100, 1,000 (and 5,000 in full mode) commits/s while a
// probe commits a unique row into the source and polls the last target of
// the chain until the row shows up; one hop (src -> hop1) and a three-hop
// chain (src -> hop1 -> hop2 -> hop3). Reports p50/p95/p99/max.
#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "benchmarks.hpp"
#include "pgbench.hpp"
#include "worker.hpp"

namespace trellis::bench {

namespace {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * (v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

const char* kHops[] = {
    "TRANSFORM hop1 FROM src SELECT grp AS grp, amount * 2 AS twice",
    "TRANSFORM hop2 FROM hop1 SELECT grp AS grp, twice + 1 AS twice_plus",
    "TRANSFORM hop3 FROM hop2 SELECT grp AS grp, twice_plus * 3 AS tripled",
};

// Commits probe rows every `every` until `until`, each time polling `target`
// until the row is there; returns the commit-to-visible times in ms.
std::vector<double> probe(const std::string& url, const std::string& target, int64_t first_id,
                          Clock::time_point until, std::chrono::milliseconds every) {
  auto conn = pg::Connection::open(url, {.search_path = "public", .application_name = "probe"});
  std::vector<double> out;
  for (int64_t id = first_id; Clock::now() < until; ++id) {
    auto next = Clock::now() + every;
    conn->exec(
        fmt::format("INSERT INTO src (id, grp, amount, note) VALUES ({}, 1, 1, 'probe')", id));
    auto committed = Clock::now();
    std::string poll = fmt::format("SELECT 1 FROM {} WHERE id = {}", target, id);
    while (conn->exec(poll).rows() == 0) {
      if (Clock::now() - committed > std::chrono::seconds(60))
        throw std::runtime_error(
            fmt::format("probe row {} not visible in {} after 60s", id, target));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    out.push_back(std::chrono::duration<double, std::milli>(Clock::now() - committed).count());
    std::this_thread::sleep_until(next);
  }
  return out;
}

}  // namespace

void latency(Run& run) {
  int64_t rows = 100000;
  auto loads = run.size<std::vector<int>>({100, 1000}, {100, 1000, 5000});
  int seconds = run.size(4, 30);
  for (int hops : {1, 3}) {
    Db db(run, "lat");
    create_source(db, rows, 100);
    auto worker = Worker::spawn(db.url(), 2, run.settings().tick, run.scratch_dir() + "/lat.log");
    std::vector<std::string> targets;
    for (int h = 0; h < hops; ++h) {
      db.trellis().apply(kHops[h]);
      targets.push_back(fmt::format("hop{}", h + 1));
      db.wait_live(targets.back(), std::chrono::seconds(600));
    }
    int64_t next_probe_id = 1000000000;
    for (int rate : loads) {
      json line = {{"hops", hops},       {"offered_commits_per_s", rate},
                   {"seconds", seconds}, {"source_rows", rows},
                   {"drain_threads", 2}, {"tick_ms", run.settings().tick.count()}};
      try {
        db.converge(std::chrono::seconds(600));
        PgbenchArgs load{fmt::format("\\set id random(1, {})\nUPDATE src SET amount = amount + 1 "
                                     "WHERE id = :id;",
                                     rows),
                         2, seconds, rate};
        Pgbench bench(db.url(), load, run.scratch_dir());
        auto until = Clock::now() + std::chrono::seconds(seconds - 1);
        auto samples =
            probe(db.url(), targets.back(), next_probe_id, until, std::chrono::milliseconds(100));
        next_probe_id += 100000;
        auto r = bench.finish();
        db.converge(std::chrono::seconds(600));
        std::string diff = oracle_all(db, targets);
        line["achieved_commits_per_s"] = r.tps;
        line["probes"] = samples.size();
        line["p50_ms"] = percentile(samples, 0.50);
        line["p95_ms"] = percentile(samples, 0.95);
        line["p99_ms"] = percentile(samples, 0.99);
        line["max_ms"] = percentile(samples, 1.0);
        if (!diff.empty()) {
          run.fail("latency", line, "oracle: " + diff);
          continue;
        }
        run.emit("latency", line);
      } catch (const std::exception& e) {
        run.fail("latency", line, e.what());
      }
    }
  }
}

}  // namespace trellis::bench
