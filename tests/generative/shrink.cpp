// Shrinking failing episodes and shrink paths; see shrink.hpp.
#include "generative/shrink.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>

namespace trellis::gen {

namespace {

using Clock = std::chrono::steady_clock;

int number(const std::string& text, const std::string& token) {
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw std::invalid_argument("malformed shrink token '" + token + "'");
  return std::stoi(text);
}

// Splits "a<sep>b" (both parts required).
std::pair<std::string, std::string> split(const std::string& text, char sep,
                                          const std::string& token) {
  auto at = text.find(sep);
  if (at == std::string::npos || at == 0 || at + 1 == text.size())
    throw std::invalid_argument("malformed shrink token '" + token + "'");
  return {text.substr(0, at), text.substr(at + 1)};
}

bool names_transform(Fault::Kind k) {
  return k == Fault::Kind::pause || k == Fault::Kind::resume || k == Fault::Kind::define ||
         k == Fault::Kind::drop || k == Fault::Kind::alter;
}

int transform_index(const Generated& g, const std::string& name) {
  for (size_t i = 0; i < g.program.transforms.size(); ++i)
    if (g.program.transforms[i].name == name) return static_cast<int>(i);
  return -1;
}

int table_index(const Generated& g, const std::string& name) {
  for (size_t i = 0; i < g.schema.tables.size(); ++i)
    if (g.schema.tables[i].name == name) return static_cast<int>(i);
  return -1;
}

// The transform, every transform reading it (at any depth), and every step
// and fault that names one of them.
bool drop_transform(Generated& g, const std::string& name) {
  int t = transform_index(g, name);
  if (t < 0) return false;
  auto& transforms = g.program.transforms;
  std::vector<bool> gone(transforms.size(), false);
  gone[static_cast<size_t>(t)] = true;
  for (size_t i = 0; i < transforms.size(); ++i)  // upstreams come first
    if (transforms[i].upstream >= 0 && gone[static_cast<size_t>(transforms[i].upstream)])
      gone[i] = true;
  std::vector<int> remap(transforms.size(), -1);
  std::vector<Transform> kept;
  for (size_t i = 0; i < transforms.size(); ++i) {
    if (gone[i]) continue;
    remap[i] = static_cast<int>(kept.size());
    kept.push_back(transforms[i]);
    if (kept.back().upstream >= 0)
      kept.back().upstream = remap[static_cast<size_t>(kept.back().upstream)];
  }
  transforms = std::move(kept);
  std::vector<Step> steps;
  for (Step s : g.plan.steps) {
    if (s.kind == Step::Kind::define) {
      if (gone[static_cast<size_t>(s.transform)]) continue;
      s.transform = remap[static_cast<size_t>(s.transform)];
    }
    std::vector<Fault> faults;
    for (Fault f : s.faults) {
      if (names_transform(f.kind)) {
        if (gone[static_cast<size_t>(f.target)]) continue;
        f.target = remap[static_cast<size_t>(f.target)];
      }
      faults.push_back(f);
    }
    s.faults = std::move(faults);
    steps.push_back(std::move(s));
  }
  g.plan.steps = std::move(steps);
  return true;
}

// A table no transform reads, with its rows and the TRUNCATEs of it.
bool drop_table(Generated& g, const std::string& name) {
  int t = table_index(g, name);
  if (t < 0 || g.schema.tables.size() == 1) return false;
  for (const auto& tr : g.program.transforms)
    if ((tr.upstream < 0 && tr.source == name) ||
        std::find(tr.joined.begin(), tr.joined.end(), name) != tr.joined.end())
      return false;
  for (auto& s : g.plan.steps) {
    std::vector<Fault> faults;
    for (Fault f : s.faults) {
      if (f.kind == Fault::Kind::truncate || f.kind == Fault::Kind::reattach_partition ||
          f.kind == Fault::Kind::truncate_partition) {
        if (f.target == t) continue;
        if (f.target > t) --f.target;
      }
      faults.push_back(f);
    }
    s.faults = std::move(faults);
  }
  g.schema.tables.erase(g.schema.tables.begin() + t);
  if (static_cast<size_t>(t) < g.rows.size()) g.rows.erase(g.rows.begin() + t);
  return true;
}

Step* step_at(Generated& g, int n) {
  if (n < 1 || static_cast<size_t>(n) > g.plan.steps.size()) return nullptr;
  return &g.plan.steps[static_cast<size_t>(n) - 1];
}

Step* burst_at(Generated& g, int n) {
  Step* s = step_at(g, n);
  return s && s->kind == Step::Kind::burst ? s : nullptr;
}

std::vector<std::string> path_tokens(const std::string& path) {
  std::vector<std::string> out;
  for (size_t at = 0; at < path.size();) {
    size_t comma = std::min(path.find(',', at), path.size());
    if (comma > at) out.push_back(path.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& t : tokens) out += (out.empty() ? "" : ",") + t;
  return out;
}

// Whether `next` sets what `previous` set (same kind, same step, table or
// worker), so that `next` alone has the effect of both.
bool settles(const std::string& previous, const std::string& next) {
  auto what = [](const std::string& t) { return t.substr(0, t.find('=')); };
  if (next.find('=') == std::string::npos || what(previous) != what(next)) return false;
  return next.starts_with("txns:") || next.starts_with("writers:") || next.starts_with("rows:") ||
         next.starts_with("drains:");
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// How big an episode is, for the before/after line.
std::string size_of(const Generated& g) {
  int faults = 0, transactions = 0;
  for (const auto& s : g.plan.steps) {
    faults += static_cast<int>(s.faults.size());
    if (s.kind == Step::Kind::burst) transactions += s.writers * s.ops_each;
  }
  size_t rows = 0;
  for (const auto& r : g.rows) rows += r.size();
  int drains = 0;
  for (const auto& w : g.plan.workers) drains += w.drain_threads;
  return fmt::format(
      "{} table(s), {} starting row(s), {} transform(s), {} step(s), {} fault(s), "
      "{} transaction(s), {} worker process(es) with {} drain thread(s)",
      g.schema.tables.size(), rows, g.program.transforms.size(), g.plan.steps.size(), faults,
      transactions, g.plan.workers.size(), drains);
}

}  // namespace

bool apply_reduction(Generated& g, const std::string& token) {
  auto [kind, arg] = split(token, ':', token);
  if (kind == "drop") return drop_transform(g, arg);
  if (kind == "table") return drop_table(g, arg);
  if (kind == "step") {
    int n = number(arg, token);
    if (!step_at(g, n)) return false;
    g.plan.steps.erase(g.plan.steps.begin() + (n - 1));
    return true;
  }
  if (kind == "fault") {
    auto [step, fault] = split(arg, '.', token);
    Step* s = burst_at(g, number(step, token));
    int f = number(fault, token);
    if (!s || f < 1 || static_cast<size_t>(f) > s->faults.size()) return false;
    s->faults.erase(s->faults.begin() + (f - 1));
    return true;
  }
  if (kind == "writers" || kind == "txns") {
    auto [step, value] = split(arg, '=', token);
    Step* s = burst_at(g, number(step, token));
    int v = number(value, token);
    if (!s || v < 1) return false;
    (kind == "writers" ? s->writers : s->ops_each) = v;
    return true;
  }
  if (kind == "rows") {
    auto [table, value] = split(arg, '=', token);
    int t = table_index(g, table);
    int v = number(value, token);
    if (t < 0 || static_cast<size_t>(t) >= g.rows.size() ||
        static_cast<size_t>(v) > g.rows[static_cast<size_t>(t)].size())
      return false;
    g.rows[static_cast<size_t>(t)].resize(static_cast<size_t>(v));
    return true;
  }
  if (kind == "worker") {
    int n = number(arg, token);
    if (n < 1 || static_cast<size_t>(n) > g.plan.workers.size()) return false;
    g.plan.workers.erase(g.plan.workers.begin() + (n - 1));
    return true;
  }
  if (kind == "drains") {
    auto [worker, value] = split(arg, '=', token);
    int n = number(worker, token);
    if (n < 1 || static_cast<size_t>(n) > g.plan.workers.size()) return false;
    g.plan.workers[static_cast<size_t>(n) - 1].drain_threads = number(value, token);
    return true;
  }
  throw std::invalid_argument("unknown shrink token '" + token + "'");
}

void apply_shrink_path(Generated& g, const std::string& path) {
  std::vector<std::string> tokens = path_tokens(path);
  for (const auto& t : tokens)
    if (!apply_reduction(g, t))
      throw std::invalid_argument("shrink token '" + t + "' does not apply to seed " +
                                  std::to_string(g.seed) + " at that point of the path");
  if (auto problem = plan_problem(g); !problem.empty())
    throw std::invalid_argument("the shrink path leaves a plan that cannot run: " + problem);
  g.shrink_path = join(tokens);
}

std::string plan_problem(const Generated& g) {
  if (g.schema.tables.empty()) return "no table";
  int staging = 0, drains = 0;
  for (const auto& w : g.plan.workers) {
    staging += w.staging ? 1 : 0;
    drains += w.drain_threads;
    if (!w.staging && w.drain_threads < 1) return "a drain-only worker without drain threads";
  }
  if (staging == 0) return "no staging worker at the start";
  if (drains == 0) return "no drain thread at the start";
  if (g.plan.steps.empty() || g.plan.steps.back().kind != Step::Kind::quiesce)
    return "the last step is not a quiesce";
  const auto& transforms = g.program.transforms;
  std::set<int> defined, paused;
  auto name = [&](int t) { return transforms[static_cast<size_t>(t)].name; };
  auto in_range = [&](int t) { return t >= 0 && static_cast<size_t>(t) < transforms.size(); };
  auto define = [&](int t) -> std::string {
    if (!in_range(t)) return "defines a transform that is not there";
    if (defined.count(t)) return "defines " + name(t) + " twice";
    int up = transforms[static_cast<size_t>(t)].upstream;
    if (up >= 0 && (!defined.count(up) || paused.count(up)))
      return "defines " + name(t) + " while " + name(up) + " is not live";
    defined.insert(t);
    return "";
  };
  for (size_t i = 0; i < g.plan.steps.size(); ++i) {
    const Step& s = g.plan.steps[i];
    std::string problem;
    if (s.kind == Step::Kind::define) problem = define(s.transform);
    if (s.kind == Step::Kind::burst && (s.writers < 1 || s.ops_each < 1))
      problem = "a burst without writes";
    for (const auto& f : s.faults) {
      if (!problem.empty()) break;
      if (names_transform(f.kind) && !in_range(f.target)) {
        problem = "a fault names a transform that is not there";
        break;
      }
      switch (f.kind) {
        case Fault::Kind::pause:
          if (!defined.count(f.target) || paused.count(f.target))
            problem = "pauses " + name(f.target) + " while it is not running";
          paused.insert(f.target);
          break;
        case Fault::Kind::resume:
          if (!paused.count(f.target)) problem = "resumes " + name(f.target) + " unpaused";
          paused.erase(f.target);
          break;
        case Fault::Kind::define:
          problem = define(f.target);
          break;
        case Fault::Kind::drop: {
          bool read = false;
          for (int r : defined)
            read = read || transforms[static_cast<size_t>(r)].upstream == f.target;
          if (!paused.count(f.target) || read)
            problem = "drops " + name(f.target) + " while it is not paused or is read";
          paused.erase(f.target);
          defined.erase(f.target);
          break;
        }
        case Fault::Kind::alter:
          if (!defined.count(f.target) || paused.count(f.target) ||
              transforms[static_cast<size_t>(f.target)].aggregate)
            problem = "alters " + name(f.target) + " while it is not a running 1-1 transform";
          break;
        case Fault::Kind::truncate:
          if (f.target < 0 || static_cast<size_t>(f.target) >= g.schema.tables.size())
            problem = "truncates a table that is not there";
          break;
        case Fault::Kind::reattach_partition:
        case Fault::Kind::truncate_partition:
          if (f.target < 0 || static_cast<size_t>(f.target) >= g.schema.tables.size() ||
              f.partition >= g.schema.tables[static_cast<size_t>(f.target)].partitions)
            problem = "names a partition that is not there";
          break;
        case Fault::Kind::kill_worker:
        case Fault::Kind::restart_fast:
        case Fault::Kind::restart_immediate:
        case Fault::Kind::join_worker:
          break;
      }
    }
    if (!problem.empty()) return fmt::format("step {} {}", i + 1, problem);
  }
  return "";
}

std::string failing_transform(const Outcome& outcome) {
  static const std::regex name(R"((^|[^A-Za-z0-9_])(d[0-9]+)($|[^A-Za-z0-9_]))");
  std::smatch m;
  std::string line = first_line(outcome.what);
  return std::regex_search(line, m, name) ? m[2].str() : "";
}

std::string failure_signature(const Outcome& outcome) {
  std::string out;
  for (char c : first_line(outcome.what)) {
    bool digit = c >= '0' && c <= '9';
    if (!digit || out.empty() || out.back() != '#') out += digit ? '#' : c;
  }
  return out;
}

ShrinkResult shrink(const Generated& original, const Outcome& original_failure,
                    const ShrinkOptions& options, const ShrinkHooks& hooks) {
  auto start = Clock::now();
  auto deadline = start + options.budget;
  ShrinkResult r;
  r.original_size = size_of(original);
  r.smallest = original;
  r.failure = original_failure;
  const std::string transform = failing_transform(original_failure);
  const std::string signature = failure_signature(original_failure);
  std::string rule = "any failure counts";
  if (options.match == Match::same_failure)
    rule = "a failure counts when it reads \"" + signature + "\"" +
           (transform.empty() ? "" : " and names " + transform);
  else if (options.match == Match::same_transform && !transform.empty())
    rule = "a failure counts when it names " + transform;
  hooks.print(fmt::format(
      "=== shrinking seed {}: it failed in step {}; budget {}s; a candidate fails when it fails "
      "within {} run(s); {} ===",
      original.seed, original_failure.failed_step, options.budget.count(), options.tries, rule));
  int run_number = 0;
  int differently = 0;  // runs of the current candidate that failed otherwise
  auto counts = [&](const Outcome& o) {
    if (o.failure.empty()) return false;
    switch (options.match) {
      case Match::same_failure:
        return failure_signature(o) == signature && failing_transform(o) == transform;
      case Match::same_transform:
        return transform.empty() || failing_transform(o) == transform;
      case Match::any:
        break;
    }
    return true;
  };
  // Runs `g` up to `tries` times; the first failure that counts, with its run.
  auto fails = [&](const Generated& g, int tries) -> std::optional<std::pair<Outcome, int>> {
    for (int i = 0; i < tries; ++i) {
      if (Clock::now() >= deadline) {
        r.out_of_time = true;
        return std::nullopt;
      }
      int run = ++run_number;
      ++r.runs;
      Outcome o = hooks.run(g, run);
      if (counts(o)) return std::make_pair(std::move(o), run);
      if (!o.failure.empty()) {
        hooks.print(fmt::format("  run {} failed differently, not counted: step {}: {}", run,
                                o.failed_step, first_line(o.what)));
        hooks.discard(o, run);
        ++differently;
      }
    }
    return std::nullopt;
  };

  for (int i = 0; i < options.replays && !r.reproduced && !r.out_of_time; ++i) {
    ++r.replays;
    if (auto f = fails(original, 1)) {
      r.reproduced = true;
      hooks.discard(f->first, f->second);  // the original's report stays the one shown
    }
  }
  if (!r.reproduced) {
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
  }
  hooks.print(fmt::format("  reproduced in replay {} of {}", r.replays, options.replays));

  // Reductions extend the path the original already carries (a replayed
  // shrunk episode), so the result still applies to the seed's episode.
  std::vector<std::string> path = path_tokens(original.shrink_path);
  Generated plain = original;
  plain.shrink_path.clear();
  std::set<std::string> tried = {plain.describe()};
  // Tries the current smallest episode with `tokens` applied; keeps it when
  // it still fails.
  auto attempt = [&](const std::vector<std::string>& tokens) {
    if (r.out_of_time) return false;
    Generated candidate = r.smallest;
    candidate.shrink_path.clear();
    for (const auto& t : tokens)
      if (!apply_reduction(candidate, t)) return false;
    if (!plan_problem(candidate).empty() || !tried.insert(candidate.describe()).second)
      return false;
    // A setting that follows one of the same thing (txns:3=7 after
    // txns:3=14) replaces it, keeping the path short.
    std::vector<std::string> longer = path;
    if (tokens.size() == 1 && !longer.empty() && settles(longer.back(), tokens[0]))
      longer.pop_back();
    longer.insert(longer.end(), tokens.begin(), tokens.end());
    candidate.shrink_path = join(longer);
    int number = ++r.candidates;
    differently = 0;
    auto f = fails(candidate, options.tries);
    if (!f) {
      hooks.print(fmt::format("  candidate {} [{}]: {}", number, join(tokens),
                              r.out_of_time ? "not finished, out of time"
                              : differently ? "failed only differently, not kept"
                                            : "passed"));
      return false;
    }
    hooks.print(fmt::format("  candidate {} [{}]: still fails in step {}, kept ({})", number,
                            join(tokens), f->first.failed_step, size_of(candidate)));
    if (r.failure_run) hooks.discard(r.failure, r.failure_run);
    r.smallest = std::move(candidate);
    r.failure = std::move(f->first);
    r.failure_run = f->second;
    path = std::move(longer);
    r.kept += static_cast<int>(tokens.size());
    return true;
  };
  auto steps = [&] { return r.smallest.plan.steps.size(); };
  auto step = [&](size_t i) -> const Step& { return r.smallest.plan.steps[i]; };
  auto is_burst = [&](size_t i) { return i < steps() && step(i).kind == Step::Kind::burst; };
  auto n = [](size_t i) { return std::to_string(i + 1); };

  for (bool progress = true; progress && !r.out_of_time;) {
    progress = false;
    auto note = [&](bool kept) { progress = progress || kept; };
    // Transforms (with their readers and the steps that name them), last first.
    std::vector<std::string> names;
    for (const auto& t : r.smallest.program.transforms) names.push_back(t.name);
    for (auto it = names.rbegin(); it != names.rend(); ++it) note(attempt({"drop:" + *it}));
    // A burst with the quiesce after it (not the last one), last first.
    for (size_t i = steps(); i-- > 0;)
      if (i + 2 < steps() && is_burst(i) && step(i + 1).kind == Step::Kind::quiesce)
        note(attempt({"step:" + n(i + 1), "step:" + n(i)}));
    // Any one step; the plan check keeps a quiesce last and every define
    // before what needs it.
    for (size_t i = steps(); i-- > 0;)
      if (i < steps()) note(attempt({"step:" + n(i)}));
    // Faults inside bursts.
    for (size_t i = steps(); i-- > 0;)
      for (size_t j = is_burst(i) ? step(i).faults.size() : 0; j-- > 0;)
        if (is_burst(i) && j < step(i).faults.size()) note(attempt({"fault:" + n(i) + "." + n(j)}));
    // Transactions per writer: one, else halved while it still fails.
    for (size_t i = 0; i < steps(); ++i) {
      if (!is_burst(i) || step(i).ops_each <= 1) continue;
      if (attempt({"txns:" + n(i) + "=1"})) {
        progress = true;
        continue;
      }
      while (is_burst(i) && step(i).ops_each > 2 &&
             attempt({"txns:" + n(i) + "=" + std::to_string(step(i).ops_each / 2)}))
        progress = true;
    }
    // Writers: one, else one fewer.
    for (size_t i = 0; i < steps(); ++i) {
      if (!is_burst(i) || step(i).writers <= 1) continue;
      int w = step(i).writers;
      if (attempt({"writers:" + n(i) + "=1"}))
        progress = true;
      else if (w > 2)
        note(attempt({"writers:" + n(i) + "=" + std::to_string(w - 1)}));
    }
    // Tables nothing reads.
    std::vector<std::string> tables;
    for (const auto& t : r.smallest.schema.tables) tables.push_back(t.name);
    for (auto it = tables.rbegin(); it != tables.rend(); ++it) note(attempt({"table:" + *it}));
    // Starting rows: none, else halved while it still fails.
    for (size_t t = 0; t < r.smallest.schema.tables.size(); ++t) {
      const std::string table = r.smallest.schema.tables[t].name;
      auto rows = [&] { return t < r.smallest.rows.size() ? r.smallest.rows[t].size() : 0; };
      if (rows() == 0) continue;
      if (attempt({"rows:" + table + "=0"})) {
        progress = true;
        continue;
      }
      while (rows() > 1 && attempt({"rows:" + table + "=" + std::to_string(rows() / 2)}))
        progress = true;
    }
    // Worker processes at the start, last first, then their drain threads.
    for (size_t i = r.smallest.plan.workers.size(); i-- > 0;) note(attempt({"worker:" + n(i)}));
    for (size_t i = 0; i < r.smallest.plan.workers.size(); ++i) {
      const WorkerSpec& w = r.smallest.plan.workers[i];
      int least = w.staging ? 0 : 1, d = w.drain_threads;
      if (d <= least) continue;
      if (attempt({"drains:" + n(i) + "=" + std::to_string(least)}))
        progress = true;
      else if (d - 1 > least)
        note(attempt({"drains:" + n(i) + "=" + std::to_string(d - 1)}));
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.smallest.shrink_path = join(path);
  return r;
}

std::string describe_shrink(const ShrinkResult& r, const std::string& exe) {
  if (!r.reproduced)
    return fmt::format("=== shrink: did not reproduce in {} replays; not shrunk{} ===\n", r.replays,
                       r.out_of_time ? " (the shrink budget ran out)" : "");
  std::string out = fmt::format(
      "=== shrunk episode, seed {}: {} reduction(s) kept, {} candidate(s) tried, {} "
      "episode(s) run, {:.0f}s{} ===\n",
      r.smallest.seed, r.kept, r.candidates, r.runs, r.seconds,
      r.out_of_time ? " (the shrink budget ran out)" : " (no smaller candidate fails)");
  out += "was: " + r.original_size + "\nnow: " + size_of(r.smallest) + "\n";
  out += "replay: " + r.smallest.replay_env() + " TRELLIS_GEN_SHRINK=0 " + exe + "\n";
  if (r.kept == 0) out += "no reduction still fails; the original episode is the smallest found\n";
  out += r.failure.failure;
  out += "=== end of shrunk episode, seed " + std::to_string(r.smallest.seed) + " ===\n";
  return out;
}

}  // namespace trellis::gen
