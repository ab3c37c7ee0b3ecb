// latency: commit-to-visible time under a fixed offered load. pgbench offers
// single-row updates at 100, 1,000 (and 5,000 in full mode) commits/s while a
// probe commits a unique row into the source every 100 ms and polls the last
// target of the chain for the probes not visible yet; one hop (src -> hop1) and a three-hop
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

// Commits a probe row every `every` until `until` without waiting for it,
// and polls `target` every millisecond for the probes not seen yet; returns
// each probe's commit-to-visible time in ms once all are visible.
std::vector<double> probe(const std::string& url, const std::string& target, int64_t first_id,
                          Clock::time_point until, std::chrono::milliseconds every) {
  pg::SessionPins pins{.search_path = "public", .application_name = "probe"};
  auto writer = pg::Connection::open(url, pins);
  auto reader = pg::Connection::open(url, pins);
  std::vector<Clock::time_point> committed;
  std::vector<double> out;
  int64_t seen = 0;  // probes first_id .. first_id + seen - 1 are visible
  auto next = Clock::now();
  while (Clock::now() < until || seen < static_cast<int64_t>(committed.size())) {
    if (Clock::now() >= next && Clock::now() < until) {
      writer->exec(fmt::format("INSERT INTO src (id, grp, amount, note) VALUES ({}, 1, 1, 'probe')",
                               first_id + static_cast<int64_t>(committed.size())));
      committed.push_back(Clock::now());
      next += every;
    }
    if (seen < static_cast<int64_t>(committed.size())) {
      // Commits are ordered, but drains are not: count every visible probe.
      auto r = reader->exec(fmt::format("SELECT id FROM {} WHERE id >= {} AND id < {} ORDER BY id",
                                        target, first_id + seen,
                                        first_id + static_cast<int64_t>(committed.size())));
      auto now = Clock::now();
      for (int i = 0; i < r.rows(); ++i) {
        int64_t k = r.get_int(i, 0) - first_id;
        while (static_cast<int64_t>(out.size()) <= k) out.push_back(-1);
        if (out[k] < 0)
          out[k] = std::chrono::duration<double, std::milli>(now - committed[k]).count();
      }
      while (seen < static_cast<int64_t>(out.size()) && out[seen] >= 0) ++seen;
      if (seen < static_cast<int64_t>(committed.size()) &&
          now - committed[seen] > std::chrono::seconds(60))
        throw std::runtime_error(
            fmt::format("probe row {} not visible in {} after 60s", first_id + seen, target));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return out;
}

}  // namespace

void latency(Run& run) {
  int64_t rows = run.size<int64_t>(20000, 100000);
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
        run.report("latency", line, diff);
      } catch (const std::exception& e) {
        run.fail("latency", line, e.what());
      }
    }
  }
}

}  // namespace trellis::bench
