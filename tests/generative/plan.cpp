// Random step lists; see plan.hpp.
#include "generative/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace trellis::gen {

WorkerSpec random_worker(Rng& rng, bool staging) {
  WorkerSpec w;
  w.staging = staging;
  w.drain_threads = static_cast<int>(uniform(rng, staging ? 0 : 1, 3));
  w.tick_ms = pick(rng, std::vector<int>{5, 20, 50, 200});
  // Derived, not drawn, so a recorded seed replays the same steps: builds of
  // many small ranges (parking across them) and of one range.
  const int kRangeRows[] = {7, 64, 50000};
  w.build_range_rows = kRangeRows[(w.tick_ms / 5 + w.drain_threads) % 3];
  return w;
}

std::string Fault::describe(const Schema& schema, const Program& program) const {
  std::string what;
  switch (kind) {
    case Kind::kill_worker:
      what = fmt::format(
          "kill -9 worker pick {} mid-page, replaced by [{}] (a staging worker is "
          "replaced by a staging worker)",
          target, spec.describe());
      break;
    case Kind::restart_fast:
      what = "PostgreSQL fast restart";
      break;
    case Kind::restart_immediate:
      what = "PostgreSQL immediate restart";
      break;
    case Kind::join_worker:
      what = fmt::format("a worker process joins [{}]", spec.describe());
      break;
    case Kind::pause:
      what = "PAUSE TRANSFORM " + program.transforms[static_cast<size_t>(target)].name;
      break;
    case Kind::resume:
      what = "RESUME TRANSFORM " + program.transforms[static_cast<size_t>(target)].name;
      break;
    case Kind::truncate:
      what = "TRUNCATE " + schema.tables[static_cast<size_t>(target)].name;
      break;
    case Kind::define:
      what = "define " + program.transforms[static_cast<size_t>(target)].name;
      break;
    case Kind::drop:
      what = "DROP TRANSFORM " + program.transforms[static_cast<size_t>(target)].name;
      break;
    case Kind::alter:
      what = "ALTER TRANSFORM " + program.transforms[static_cast<size_t>(target)].name +
             " (adds a field, or drops the one it added)";
      break;
    case Kind::reattach_partition:
      what = fmt::format("DETACH PARTITION {}{}, then ATTACH it again",
                         schema.tables[static_cast<size_t>(target)].partition(partition),
                         concurrently ? " CONCURRENTLY" : "");
      break;
    case Kind::truncate_partition:
      what = "TRUNCATE " + schema.tables[static_cast<size_t>(target)].partition(partition);
      break;
  }
  return fmt::format("at {}%: {}", at_percent, what);
}

std::vector<uint64_t> Step::writer_seeds() const {
  std::vector<uint64_t> out;
  for (int w = 0; w < writers; ++w) out.push_back(seed * 1000003ULL + static_cast<uint64_t>(w));
  return out;
}

std::string Step::describe(const Schema& schema, const Program& program) const {
  switch (kind) {
    case Kind::define:
      return "define " + program.transforms[static_cast<size_t>(transform)].name;
    case Kind::quiesce:
      return "quiesce: every unpaused transform live (or waiting for a paused upstream), token, "
             "await, oracle";
    case Kind::burst:
      break;
  }
  std::string out =
      fmt::format("burst: {} writer(s) x {} transactions (step seed {})", writers, ops_each, seed);
  for (const auto& f : faults) out += "\n    " + f.describe(schema, program);
  return out;
}

std::string Plan::describe(const Schema& schema, const Program& program) const {
  std::string out = "workers at start:\n";
  for (const auto& w : workers) out += "  [" + w.describe() + "]\n";
  out += "steps:\n";
  for (size_t i = 0; i < steps.size(); ++i)
    out += fmt::format("  {:2}. {}\n", i + 1, steps[i].describe(schema, program));
  return out;
}

namespace {

// What the plan knows while it is being drawn.
struct PlanState {
  std::set<int> defined, paused;
  std::vector<int> deferred;  // level-0 transforms defined under the first burst
  // Resumed while their upstream was paused (or waited so itself): they wait
  // at waiting_to_backfill until it is resumed, and nothing is defined over them.
  std::set<int> waiting;
  // Readers resumed in this burst or defined since the last quiesce: their
  // builds may not have started, so their upstreams are not paused.
  std::set<int> resumed_in_burst;
};

int upstream_of(const Program& program, int t) {
  return program.transforms[static_cast<size_t>(t)].upstream;
}

// Drops from `waiting` what no longer waits: its upstream is neither paused
// nor waiting (it goes live, and then the reader builds).
void settle_waits(const Program& program, PlanState& s) {
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = s.waiting.begin(); it != s.waiting.end();) {
      int up = upstream_of(program, *it);
      if (!s.paused.count(up) && !s.waiting.count(up)) {
        it = s.waiting.erase(it);
        changed = true;
      } else {
        ++it;
      }
    }
  }
}

Fault fault_of(Fault::Kind kind, int at_percent, int target) {
  Fault f;
  f.kind = kind;
  f.at_percent = at_percent;
  f.target = target;
  return f;
}

Step define_step(int transform) {
  Step s;
  s.kind = Step::Kind::define;
  s.transform = transform;
  return s;
}

std::vector<int> pausable(const PlanState& s) {
  std::vector<int> out;
  for (int t : s.defined)
    if (!s.paused.count(t)) out.push_back(t);
  return out;
}

// Paused transforms no defined transform reads: DROP accepts them.
std::vector<int> droppable(const Program& program, const PlanState& s) {
  std::vector<int> out;
  for (int t : s.paused) {
    bool read = false;
    for (int r : s.defined) read = read || program.transforms[static_cast<size_t>(r)].upstream == t;
    if (!read) out.push_back(t);
  }
  return out;
}

Fault random_fault(Rng& rng, const Schema& schema, const Program& program, PlanState& s) {
  Fault f;
  for (;;) {
    int roll = static_cast<int>(uniform(rng, 0, 99));
    if (roll < 28) {
      f.kind = Fault::Kind::kill_worker;
      f.target = static_cast<int>(uniform(rng, 0, 1000));
      f.spec = random_worker(rng, false);
    } else if (roll < 36) {
      f.kind = Fault::Kind::restart_fast;
    } else if (roll < 44) {
      f.kind = Fault::Kind::restart_immediate;
    } else if (roll < 56) {
      f.kind = Fault::Kind::join_worker;
      f.spec = random_worker(rng, false);
    } else if (roll < 72) {
      // Not an upstream of a reader resumed in this burst or defined since
      // the last quiesce: that reader may not have started its build yet,
      // and would then wait for this one to be resumed (a build waits for
      // every upstream to be live), which the plan does not know.
      std::vector<int> can;
      for (int t : pausable(s)) {
        bool reader_resumed = false;
        for (int r : s.resumed_in_burst)
          reader_resumed = reader_resumed || upstream_of(program, r) == t;
        if (!reader_resumed) can.push_back(t);
      }
      if (can.empty()) continue;
      f.kind = Fault::Kind::pause;
      f.target = pick(rng, can);
      s.paused.insert(f.target);
      s.waiting.erase(f.target);
    } else if (roll < 80) {
      if (s.paused.empty()) continue;
      f.kind = Fault::Kind::resume;
      f.target = pick(rng, std::vector<int>(s.paused.begin(), s.paused.end()));
      s.paused.erase(f.target);
      int up = upstream_of(program, f.target);
      if (up >= 0 && (s.paused.count(up) || s.waiting.count(up))) s.waiting.insert(f.target);
      settle_waits(program, s);
      s.resumed_in_burst.insert(f.target);
    } else if (roll < 86) {
      auto can = droppable(program, s);
      if (can.empty()) continue;
      f.kind = Fault::Kind::drop;
      f.target = pick(rng, can);
      s.paused.erase(f.target);
      s.defined.erase(f.target);
    } else if (roll < 93) {
      std::vector<int> can;
      for (int t : pausable(s))
        if (!program.transforms[static_cast<size_t>(t)].aggregate) can.push_back(t);
      if (can.empty()) continue;
      f.kind = Fault::Kind::alter;
      f.target = pick(rng, can);
    } else {
      f.kind = Fault::Kind::truncate;
      f.target = static_cast<int>(uniform(rng, 0, static_cast<int64_t>(schema.tables.size()) - 1));
    }
    return f;
  }
}

Step random_burst(Rng& rng, const Schema& schema, const Program& program, PlanState& s,
                  int faults) {
  Step b;
  b.kind = Step::Kind::burst;
  b.writers = static_cast<int>(uniform(rng, 1, 4));
  b.ops_each = static_cast<int>(uniform(rng, 20, 120));
  b.seed = rng() >> 16;
  for (int t : s.deferred) {
    b.faults.push_back(fault_of(Fault::Kind::define, 0, t));
  }
  for (int i = 0; i < faults; ++i) b.faults.push_back(random_fault(rng, schema, program, s));
  // Deferred defines become pausable only after this burst.
  s.defined.insert(s.deferred.begin(), s.deferred.end());
  s.deferred.clear();
  // Faults fire in the order they were drawn (a RESUME after its PAUSE).
  std::vector<int> at;
  for (size_t i = 0; i < b.faults.size(); ++i) at.push_back(static_cast<int>(uniform(rng, 0, 95)));
  std::sort(at.begin(), at.end());
  for (size_t i = 0; i < b.faults.size(); ++i) b.faults[i].at_percent = at[i];
  return b;
}

}  // namespace

Plan random_plan(Rng& rng, const Schema& schema, const Program& program, int rounds) {
  Plan p;
  p.workers.push_back(random_worker(rng, true));
  int extra = static_cast<int>(uniform(rng, 0, 2));
  for (int i = 0; i < extra; ++i) p.workers.push_back(random_worker(rng, false));
  if (extra == 0 && p.workers[0].drain_threads == 0) p.workers[0].drain_threads = 1;

  PlanState s;
  for (size_t i = 0; i < program.transforms.size(); ++i) {
    int t = static_cast<int>(i);
    if (program.transforms[i].level != 0) continue;
    // A hot program defines most of its roots under the first burst, all
    // at one moment, while capture on their shared table is installed.
    if (chance(rng, program.hot ? 0.7 : 0.25)) {
      s.deferred.push_back(t);
    } else {
      p.steps.push_back(define_step(t));
      s.defined.insert(t);
    }
  }
  for (int r = 0; r <= rounds; ++r) {
    bool last = r == rounds;
    int faults = last ? 0 : static_cast<int>(uniform(rng, 0, 2));
    Step burst = random_burst(rng, schema, program, s, faults);
    if (last && !s.paused.empty() && chance(rng, 0.5)) {
      for (int t : s.paused) burst.faults.push_back(fault_of(Fault::Kind::resume, 50, t));
      s.paused.clear();
      s.waiting.clear();  // every upstream is resumed too
    }
    p.steps.push_back(std::move(burst));
    Step quiesce;
    quiesce.kind = Step::Kind::quiesce;
    p.steps.push_back(quiesce);
    s.resumed_in_burst.clear();  // every reader is built (or waits) by now
    if (last) break;
    // A chained transform (or a dropped one) is defined after a quiesce,
    // once its upstream is live (defined, not paused and not waiting).
    for (size_t i = 0; i < program.transforms.size(); ++i) {
      const Transform& t = program.transforms[i];
      int idx = static_cast<int>(i);
      bool upstream_live =
          t.upstream < 0 || (s.defined.count(t.upstream) && !s.paused.count(t.upstream) &&
                             !s.waiting.count(t.upstream));
      if (s.defined.count(idx) || !upstream_live || !(chance(rng, 0.6) || r + 2 >= rounds))
        continue;
      p.steps.push_back(define_step(idx));
      s.defined.insert(idx);
      s.resumed_in_burst.insert(idx);  // not built before the next burst starts
    }
  }
  return p;
}

}  // namespace trellis::gen
