// Scenario runner; see scenario_runner.hpp.
#include "support/scenario_runner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <sstream>
#include <thread>

#include "pg/sql_error.hpp"

namespace trellis::test::scenario {

namespace {

constexpr auto kTimeout = std::chrono::seconds(60);
constexpr int kDrainThreads = 2;

std::string format_cell(const pg::Result& r, int row, int col) {
  auto v = r.get_opt(row, col);
  if (!v) return "NULL";
  if (v->empty()) return "(empty)";
  return *v;
}

std::vector<std::string> format_rows(const pg::Result& r) {
  std::vector<std::string> out;
  for (int i = 0; i < r.rows(); ++i) {
    std::string line;
    for (int c = 0; c < r.columns(); ++c) line += (c ? "|" : "") + format_cell(r, i, c);
    out.push_back(line);
  }
  return out;
}

std::string indent_rows(const std::vector<std::string>& rows) {
  if (rows.empty()) return "    (no rows)\n";
  std::string out;
  for (const auto& row : rows) out += "    " + row + "\n";
  return out;
}

std::string indent_text(const std::string& text) {
  std::string out = "    ";
  for (char c : text) out += c == '\n' ? std::string("\n    ") : std::string(1, c);
  return out + "\n";
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// Message of an exception from SQL: SQLSTATE for PostgreSQL errors.
std::string describe_exception(const std::exception& e) {
  if (const auto* sql = dynamic_cast<const pg::SqlError*>(&e))
    return "SQLSTATE " + sql->sqlstate() + ": " + sql->what() +
           (sql->detail().empty() ? "" : " (" + sql->detail() + ")");
  if (const auto* err = dynamic_cast<const Error*>(&e))
    return "trellis::Error(" + std::string(to_string(err->code())) + "): " + err->what();
  return e.what();
}

}  // namespace

Runner::Runner(Host& host, File file) : host_(host), file_(std::move(file)) {}

Runner::~Runner() {
  if (handle_) handle_->shutdown();
}

void Runner::soft_fail(const Record& r, const std::string& message) {
  ADD_FAILURE_AT(file_.path.c_str(), r.line) << where(file_, r) << ": " << message;
}

void Runner::hard_fail(const Record& r, const std::string& message) {
  soft_fail(r, message + "\n(scenario stopped here)");
  throw Abort{};
}

void Runner::run() {
  handle_ = host_.start(kDrainThreads, true);
  const Record* current = nullptr;
  try {
    for (const auto& r : file_.records) {
      current = &r;
      try {
        execute(r);
      } catch (const Abort&) {
        throw;
      } catch (const std::exception& e) {
        hard_fail(r, "unexpected exception: " + describe_exception(e));
      }
    }
    final_check();
  } catch (const Abort&) {
  } catch (const std::exception& e) {
    ADD_FAILURE_AT(file_.path.c_str(), current ? current->line : 0)
        << file_.path << ": end-of-scenario check threw " << describe_exception(e);
  }
}

void Runner::execute(const Record& r) {
  switch (r.kind) {
    case Kind::statement_ok:
    case Kind::statement_error:
      return statement(r);
    case Kind::apply_ok:
    case Kind::apply_error:
      return apply(r);
    case Kind::await_live:
      return await_live(r);
    case Kind::await_converged:
      return await_converged(r);
    case Kind::await_status:
      return await_status(r);
    case Kind::query:
      return query(r);
    case Kind::oracle:
      return oracle(r);
    case Kind::restart_workers:
      return start_workers(r, workers_on_);
    case Kind::workers_off:
      return start_workers(r, false);
    case Kind::workers_on:
      return start_workers(r, true);
    case Kind::concurrently:
      return concurrently(r);
    case Kind::status:
      return status(r);
  }
}

void Runner::statement(const Record& r) {
  try {
    host_.sql(r.body);
  } catch (const std::exception& e) {
    if (r.kind == Kind::statement_ok)
      hard_fail(r,
                "statement failed: " + describe_exception(e) + "\n  SQL:\n" + indent_text(r.body));
    std::string message = e.what();
    if (message.find(r.substring) == std::string::npos)
      soft_fail(r, "statement failed as expected, but the message lacks \"" + r.substring +
                       "\"\n  actual: " + describe_exception(e));
    return;
  }
  if (r.kind == Kind::statement_error)
    soft_fail(r, "statement succeeded; expected an error containing \"" + r.substring +
                     "\"\n  SQL:\n" + indent_text(r.body));
}

void Runner::apply(const Record& r) {
  try {
    auto applied = handle_->apply(r.body);
    if (r.kind == Kind::apply_error)
      soft_fail(r, "apply succeeded (" + applied.kind + " " + applied.target + " -> " +
                       applied.status + "); expected error " + r.error_code +
                       (r.substring.empty() ? "" : " containing \"" + r.substring + "\"") +
                       "\n  statement: " + r.body);
  } catch (const Error& e) {
    std::string code(to_string(e.code()));
    std::string message = e.what();
    if (r.kind == Kind::apply_ok)
      hard_fail(r, "apply failed with " + code + ": " + message + "\n  statement: " + r.body);
    if (code != r.error_code || message.find(r.substring) == std::string::npos)
      soft_fail(r, "expected error " + r.error_code +
                       (r.substring.empty() ? "" : " containing \"" + r.substring + "\"") +
                       "\n  actual: " + code + ": " + message + "\n  statement: " + r.body);
  }
}

std::string Runner::status_word(const std::string& target) {
  auto s = handle_->status(target);
  return s ? s->status : "(no such transform)";
}

std::string Runner::describe_status(const std::string& target) {
  auto s = handle_->status(target);
  if (!s) return "(no such transform)";
  std::ostringstream out;
  out << s->status;
  if (s->backfill_failure)
    out << "; backfill_failure chunk " << s->backfill_failure->chunk << " attempts "
        << s->backfill_failure->attempts << ": " << s->backfill_failure->error;
  if (s->capture_failure)
    out << "; capture_failure " << s->capture_failure->kind << " on " << s->capture_failure->table
        << ": " << s->capture_failure->error;
  if (s->capture_wait) out << "; capture_wait on " << s->capture_wait->table;
  if (s->drain_failure)
    out << "; drain_failure on " << s->drain_failure->table << " (" << s->drain_failure->sqlstate
        << "): " << s->drain_failure->error;
  if (s->held_keys) out << "; held_keys " << s->held_keys->count;
  out << "; build " << s->build_rows_done << "/" << s->build_rows_estimate;
  return out.str();
}

void Runner::await_live(const Record& r) {
  for (const auto& target : r.targets) {
    auto deadline = std::chrono::steady_clock::now() + kTimeout;
    for (;;) {
      std::string word = status_word(target);
      if (word == "live") break;
      if (word == "paused" || word == "quarantined" || word == "(no such transform)")
        hard_fail(r, target + " will not become live: " + describe_status(target));
      if (std::chrono::steady_clock::now() >= deadline)
        hard_fail(r, target + " not live within 60 s: " + describe_status(target));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  await_converged(r);
}

void Runner::await_status(const Record& r) {
  const std::string& target = r.targets.front();
  auto deadline = std::chrono::steady_clock::now() + kTimeout;
  while (status_word(target) != r.word) {
    if (std::chrono::steady_clock::now() >= deadline)
      hard_fail(r,
                target + " did not reach " + r.word + " within 60 s: " + describe_status(target));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void Runner::await_converged(const Record& r) {
  if (!workers_on_) hard_fail(r, "await with workers off would never converge");
  auto token = handle_->watermark_token();
  if (!handle_->await_converged(token, kTimeout)) {
    std::string statuses;
    for (const auto& s : handle_->status_all()) statuses += "\n  " + describe_status(s.target);
    hard_fail(r, "not converged within 60 s (token segment " + std::to_string(token.segment) +
                     "); transforms:" + statuses);
  }
}

void Runner::query(const Record& r) {
  auto actual = format_rows(host_.query(r.body));
  auto expected = r.expected;
  if (r.sort) {
    std::sort(actual.begin(), actual.end());
    std::sort(expected.begin(), expected.end());
  }
  if (actual == expected) return;
  soft_fail(r, "query result differs\n  SQL:\n" + indent_text(r.body) + "  expected:\n" +
                   indent_rows(expected) + "  actual:\n" + indent_rows(actual));
}

void Runner::oracle(const Record& r) {
  for (const auto& target : r.targets) {
    std::string diff = host_.oracle_diff(target);
    if (!diff.empty())
      soft_fail(r, "target " + target +
                       " differs from its definition run as a plain SELECT "
                       "(missing = in the SELECT only, extra = in the target "
                       "only):\n" +
                       indent_text(diff));
  }
}

void Runner::status(const Record& r) {
  const std::string& target = r.targets.front();
  std::string word = status_word(target);
  if (word != r.word)
    soft_fail(r, "status of " + target + " is " + describe_status(target) + "; expected " + r.word);
}

void Runner::concurrently(const Record& r) {
  std::mutex mu;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int c = 0; c < r.connections; ++c) {
    threads.emplace_back([&, c] {
      try {
        auto conn = pg::Connection::open(
            host_.url(), {.search_path = "public", .application_name = "scenario_writer"});
        for (int i = 0; i < r.repeats; ++i) {
          std::string sql = replace_all(r.body, "${conn}", std::to_string(c));
          conn->exec_script(replace_all(sql, "${iter}", std::to_string(i)));
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        errors.push_back("connection " + std::to_string(c) + ": " + describe_exception(e));
      }
    });
  }
  for (auto& t : threads) t.join();
  if (!errors.empty()) {
    std::string all;
    for (const auto& e : errors) all += "\n  " + e;
    hard_fail(r, "concurrent writes failed:" + all);
  }
}

void Runner::start_workers(const Record&, bool on) {
  handle_->shutdown();
  handle_.reset();
  handle_ = on ? host_.start(kDrainThreads, true) : host_.start(0, false);
  workers_on_ = on;
}

// Every scenario ends with: converge, then every live target equals its
// definition. A scenario that leaves workers off cannot converge.
void Runner::final_check() {
  Record end;
  end.line = file_.records.empty() ? 1 : file_.records.back().line;
  if (!workers_on_) hard_fail(end, "the scenario ends with workers off; add 'workers on'");
  await_converged(end);
  for (const auto& def : handle_->definitions()) {
    if (def.status != "live") continue;
    std::string diff = host_.oracle_diff(def.target);
    if (!diff.empty())
      soft_fail(end, "end of scenario: target " + def.target +
                         " differs from its definition (missing = in the SELECT only, extra = "
                         "in the target only):\n" +
                         indent_text(diff));
  }
}

}  // namespace trellis::test::scenario
