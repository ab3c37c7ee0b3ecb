// `trellis restore FILE`: applies a script of statements (`trellis dump`'s)
// in order, one line per statement, stopping at the first error with the
// statement's number and first line. Idempotent where it can be: a transform
// or relationship already defined as the script says is skipped, one defined
// otherwise is an error naming it. A transform reading another's target is
// defined once that one is live, and a PAUSE applied once its transform is
// live (so the frozen target or field holds values); for these waits, and
// for --wait, restore runs a staging worker and drain threads itself while
// the instance has none.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "cli/commands.hpp"
#include "lang/statement.hpp"

namespace trellis::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct RestoreArgs {
  std::string file;
  double timeout_s = 600;
  bool wait = false;
  int drain_threads = 2;
};

// The statement's first line (it starts at its first word), for messages.
std::string first_line(const std::string& statement) {
  auto end = statement.find('\n');
  std::string line = statement.substr(0, end);
  if (line.size() > 100) line = line.substr(0, 97) + "...";
  return line + (end == std::string::npos ? "" : " ...");
}

class Restore {
 public:
  Restore(const GlobalOptions& global, const RestoreArgs& args)
      : global_(global),
        args_(args),
        deadline_(Clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(args.timeout_s * 1000))),
        trellis_(Trellis::connect(handle_options(global))) {}

  ~Restore() {
    if (workers_) workers_->shutdown();
    trellis_->shutdown();
  }

  // Applies (or skips) one statement; returns the line to print.
  std::string step(const std::string& text) {
    auto parsed = lang::parse_statement(text);
    if (auto* t = std::get_if<lang::TransformStmt>(&parsed)) return transform(*t, text);
    if (auto* r = std::get_if<lang::RelationshipStmt>(&parsed)) return relationship(*r, text);
    if (auto* p = std::get_if<lang::PauseStmt>(&parsed)) return pause(*p, text);
    return applied_line(trellis_->apply(text));
  }

  // --wait: every transform the script named is live (but those it
  // paused), and every change committed so far has reached the targets.
  bool settle() {
    for (const auto& d : trellis_->definitions())
      if (std::count(named_.begin(), named_.end(), d.target) && d.status != "paused")
        await_live(d.target, "--wait", true);
    auto token = trellis_->watermark_token();
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    return trellis_->await_converged(token, std::max(left, std::chrono::milliseconds(0)));
  }

 private:
  std::string qualify(const lang::QualifiedName& name) const {
    return name.schema.value_or(global_.target_schema) + "." + name.name;
  }

  std::optional<Definition> definition(const std::string& target) {
    for (auto& d : trellis_->definitions())
      if (d.target == target) return d;
    return std::nullopt;
  }

  std::string transform(const lang::TransformStmt& stmt, const std::string& text) {
    std::string target = qualify(stmt.target);
    named_.push_back(target);
    if (auto existing = definition(target)) {
      if (existing->statement == text)
        return fmt::format("skipped transform {}: already defined as the script says", target);
      throw Error(ErrorCode::conflict,
                  fmt::format("transform {} already exists with another definition ({}); "
                              "PAUSE and DROP it first, or restore into another database",
                              target, existing->statement));
    }
    std::vector<std::string> reads{qualify(stmt.source)};
    for (const auto& j : stmt.joins) reads.push_back(qualify(j.table));
    for (const auto& table : reads) {
      auto upstream = definition(table);
      if (upstream && upstream->status != "live")
        await_live(table, "transform " + target + " reads its target");
    }
    return applied_line(trellis_->apply(text));
  }

  std::string relationship(const lang::RelationshipStmt& stmt, const std::string& text) {
    std::string from = qualify(stmt.from.table);
    for (const auto& r : trellis_->relationships()) {
      if (r.name != stmt.name || r.from_table != from) continue;
      if (r.from_column == stmt.from.column && r.to_table == qualify(stmt.to.table) &&
          r.to_column == stmt.to.column)
        return fmt::format("skipped relationship {}.{}: already declared as the script says", from,
                           stmt.name);
      throw Error(ErrorCode::conflict,
                  fmt::format("relationship {}.{} already exists and links {}.{} to {}.{}; DROP "
                              "RELATIONSHIP {}.{} first, or restore into another database",
                              from, stmt.name, r.from_table, r.from_column, r.to_table, r.to_column,
                              from, stmt.name));
    }
    return applied_line(trellis_->apply(text));
  }

  std::string pause(const lang::PauseStmt& stmt, const std::string& text) {
    std::string target = qualify(stmt.target);
    auto d = definition(target);
    bool already = d && (stmt.column ? std::count(d->paused_columns.begin(),
                                                  d->paused_columns.end(), *stmt.column) > 0
                                     : d->status == "paused");
    if (d && !already && d->status != "paused")
      await_live(target, "PAUSE TRANSFORM freezes what it holds");
    return applied_line(trellis_->apply(text));
  }

  // Runs a staging worker and drain threads in this process while the
  // instance has none (they stop when the restore ends).
  void ensure_workers() {
    if (workers_) return;
    bool staging = trellis_->has_live_staging_worker();
    bool drains = trellis_->has_live_drain_workers();
    if (staging && drains) return;
    auto o = handle_options(global_);
    o.staging = !staging;
    o.drain_threads = drains ? 0 : args_.drain_threads;
    std::cerr << fmt::format(
                     "no {} runs for instance {}: running {} in this process while "
                     "restoring",
                     staging ? "drain thread" : "staging worker", global_.schema,
                     staging  ? "drain threads"
                     : drains ? "a staging worker"
                              : "a staging worker and drain threads")
              << std::endl;
    workers_ = Trellis::connect(o);
  }

  // Waits until `target` is live (or, when `catching_up_will_do`, caught
  // up but for an upstream field paused).
  void await_live(const std::string& target, const std::string& why,
                  bool catching_up_will_do = false) {
    ensure_workers();
    while (true) {
      auto s = trellis_->status(target);
      std::string word = s ? s->status : "dropped";
      if (word == "live" || (catching_up_will_do && word == "catching_up")) return;
      if (word == "paused" || word == "quarantined" || word == "dropped")
        throw Error(ErrorCode::validation,
                    fmt::format("waiting for transform {} to be live ({}), it is {}; RESUME "
                                "TRANSFORM {} and restore again",
                                target, why, word, target));
      if (Clock::now() >= deadline_)
        throw Error(ErrorCode::timeout,
                    fmt::format("transform {} is not live after {:g} s ({}; status {}); give "
                                "--timeout more time",
                                target, args_.timeout_s, why, word));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  const GlobalOptions& global_;
  RestoreArgs args_;
  Clock::time_point deadline_;
  std::unique_ptr<Trellis> trellis_;
  std::unique_ptr<Trellis> workers_;
  std::vector<std::string> named_;  // targets of the script's transforms
};

int run_restore(const GlobalOptions& global, const RestoreArgs& args) {
  auto statements = lang::split_statements(read_input(args.file));
  if (statements.empty()) {
    // The dump of an instance without definitions.
    std::cerr << fmt::format("{} holds no statement: nothing to restore", args.file) << std::endl;
    return kExitOk;
  }
  Restore restore(global, args);
  for (size_t i = 0; i < statements.size(); ++i) {
    try {
      std::cout << restore.step(statements[i]) << std::endl;
    } catch (const Error& e) {
      throw Error(e.code(), fmt::format("statement {} of {} in {} ({}): {} (the statements "
                                        "before it were applied)",
                                        i + 1, statements.size(), args.file,
                                        first_line(statements[i]), e.what()));
    }
  }
  if (args.wait && !restore.settle()) {
    std::cerr << fmt::format("timed out after {:g} s waiting for the targets to converge",
                             args.timeout_s)
              << std::endl;
    return kExitTimeout;
  }
  return kExitOk;
}

}  // namespace

Command add_restore_command(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<RestoreArgs>();
  auto* sub = app.add_subcommand(
      "restore",
      "apply a script of statements (`trellis dump`'s) in order, skipping what is already "
      "defined the same");
  sub->add_option("file", args->file, "the script (- reads stdin)")->required();
  sub->add_flag("--wait", args->wait,
                "return once every restored transform is live and caught up (exit 2 when "
                "--timeout passes first)");
  sub->add_option("--timeout", args->timeout_s,
                  "seconds the restore may wait in all, for upstream transforms to be live "
                  "and for --wait")
      ->capture_default_str()
      ->check(seconds_validator());
  sub->add_option("--drain-threads", args->drain_threads,
                  "drain threads to run while restoring when the instance has none")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  return {sub, [&global, args] { return run_restore(global, *args); }};
}

}  // namespace trellis::cli
