// Bisection and charging; see quarantine.hpp.
#include "apply/quarantine.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/event_log.hpp"
#include "compile/one_to_one.hpp"
#include "pg/sql_error.hpp"

namespace trellis::apply {

Quarantine::Quarantine(const std::string& catalog_schema)
    : sql_(compile::compile_quarantine(catalog_schema)) {}

void Quarantine::append_hidden(int transform_id, const std::vector<Statement>& steps,
                               std::vector<Statement>& out) const {
  out.push_back({sql_.hide_held_keys, {std::to_string(transform_id)}});
  out.insert(out.end(), steps.begin(), steps.end());
  out.push_back({sql_.restore_hidden_keys, {}});
}

// Runs `stmts` under a savepoint; true when they succeed. Their effects are
// kept only when `keep` and they succeed. An error of class `counted` fills
// `failure` (error, sqlstate); any other error is rethrown.
bool Quarantine::runs(pg::Connection& conn, const std::vector<Statement>& stmts, Culprit* failure,
                      bool keep, pg::FailureClass counted) const {
  pg::Savepoint savepoint(conn, "trellis_isolate");
  bool ok = true;
  try {
    conn.pipeline(stmts);
  } catch (const pg::SqlError& e) {
    if (!conn.healthy() || pg::classify_sqlstate(e.sqlstate()) != counted) throw;
    ok = false;
    if (failure) {
      failure->error = e.what();
      failure->sqlstate = e.sqlstate();
    }
  }
  if (ok && keep)
    savepoint.release();
  else
    savepoint.rollback();
  return ok;
}

namespace {

// The statements that run `steps` over the saved keys numbered [from, to).
std::vector<Statement> over_saved(const compile::QuarantineSql& sql, const Quarantine& q,
                                  const TransformWork& work, const std::vector<Statement>& steps,
                                  int64_t from, int64_t to) {
  std::string tbl = std::to_string(work.source_table_id);
  std::vector<Statement> stmts = {
      {sql.clear_table_keys, {tbl}},
      {sql.fill_saved_range, {tbl, std::to_string(from), std::to_string(to)}}};
  q.append_hidden(work.transform_id, steps, stmts);
  return stmts;
}

}  // namespace

std::string Quarantine::failing_field(pg::Connection& conn, const TransformWork& work,
                                      int64_t number) const {
  if (!work.one_to_one) return "";
  const auto& def = *work.one_to_one;
  auto run_with = [&](const std::vector<std::string>& fields) {
    std::vector<Statement> steps;
    for (const auto& s : compile::one_to_one_steps_for(def, fields)) steps.push_back({s, {}});
    return runs(conn, over_saved(sql_, *this, work, steps, number, number + 1), nullptr, false);
  };
  if (!run_with({})) return "";  // the key fails without any field (its WHERE, say)
  for (const auto& f : def.fields)
    if (!def.paused(f.name) && !run_with({f.name})) return f.name;
  return "";  // only fields together fail (a CHECK over several, say)
}

std::optional<Culprit> Quarantine::bisect(pg::Connection& conn, const TransformWork& work) const {
  std::string tbl = std::to_string(work.source_table_id);
  int64_t lo = 0, hi = conn.exec(sql_.count_saved, {tbl}).get_int(0, 0);
  auto with_range = [&](int64_t from, int64_t to) {
    return over_saved(sql_, *this, work, work.steps, from, to);
  };
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (runs(conn, with_range(lo, mid), nullptr, false))
      lo = mid;  // the first half goes through: the failure is in the second
    else
      hi = mid;
  }
  Culprit c;
  if (hi <= lo || runs(conn, with_range(lo, lo + 1), &c, false)) return std::nullopt;
  c.transform_id = work.transform_id;
  c.tbl = work.source_table_id;
  c.key = conn.exec(sql_.saved_key, {tbl, std::to_string(lo)}).get(0, 0);
  c.column = failing_field(conn, work, lo);
  return c;
}

std::optional<Culprit> Quarantine::isolate(pg::Connection& conn, const Refill& refill) const {
  pg::Transaction txn(conn);  // never committed
  auto work = refill();
  if (!work) return std::nullopt;
  conn.exec(sql_.save_page);
  for (const auto& w : *work) {
    std::vector<Statement> stmts;
    append_hidden(w.transform_id, w.steps, stmts);
    // A transform that goes through keeps its writes: later ones may read them.
    if (!runs(conn, stmts, nullptr, true)) return bisect(conn, w);
  }
  return std::nullopt;
}

Quarantine::Charged Quarantine::charge(pg::Connection& conn, const Culprit& c,
                                       const pg::Param& seg) const {
  pg::Transaction txn(conn);
  std::string id = std::to_string(c.transform_id);
  pg::Param column = c.column.empty() ? pg::Param{} : pg::Param{c.column};
  auto locked = conn.exec(sql_.lock_transform, {id});
  std::string target = locked.rows() ? locked.get(0, 0) : "transform " + id;
  auto r =
      conn.exec(sql_.charge, {id, std::to_string(c.tbl), c.key, seg, c.error, c.sqlstate, column});
  Charged out{r.get_bool(0, 0), 100 * static_cast<int>(r.get_int(0, 1))};
  std::string tripped, event = out.held ? "key_held" : "key_failed";
  if (out.held && column) {
    if (conn.exec(sql_.trip_column_fuse, {id, column, c.error, c.sqlstate}).rows() > 0) {
      tripped = "; column fuse tripped: field " + c.column + " paused, transform rebuilding";
      event = "column_paused";
    }
  } else if (out.held && conn.exec(sql_.trip_fuse, {id}).rows() > 0) {
    tripped = "; fuse tripped: quarantined";
    event = "quarantined";
  }
  txn.commit();
  nlohmann::json details = {{"table_id", c.tbl},
                            {"key", c.key},
                            {"error", c.error},
                            {"sqlstate", c.sqlstate},
                            {"charges", out.retry_ms / 100}};
  if (!c.column.empty()) details["column"] = c.column;
  base::log_event(spdlog::level::warn, event, target, details,
                  fmt::format("key {} of table {} failed for transform {}{} ({}){}{}", c.key, c.tbl,
                              target, c.column.empty() ? "" : " in field " + c.column, c.error,
                              out.held ? "; held" : "", tripped));
  return out;
}

std::optional<Quarantine::Charged> Quarantine::charge_failure(pg::Connection& conn,
                                                              const pg::SqlError& error,
                                                              const Refill& refill,
                                                              const pg::Param& seg,
                                                              const std::string& what) const {
  if (pg::classify_sqlstate(error.sqlstate()) != pg::FailureClass::data) return std::nullopt;
  std::optional<Culprit> culprit;
  try {
    culprit = isolate(conn, refill);
  } catch (const pg::SqlError& again) {
    if (!conn.healthy()) throw;
    spdlog::warn("isolating the failing key of {} failed: {}", what, again.what());
    return std::nullopt;
  }
  if (!culprit) return std::nullopt;
  try {
    return charge(conn, *culprit, seg);
  } catch (const pg::SqlError& again) {
    // A lock timeout or deadlock with another charge: the work is retried
    // shortly and charged then.
    if (!conn.healthy() || again.failure_class() != pg::FailureClass::transient) throw;
    spdlog::warn("charging key {} of {} failed: {}", culprit->key, what, again.what());
    return Charged{false, 100};
  }
}

std::vector<std::string> Quarantine::halt_failure(pg::Connection& conn, const pg::SqlError& error,
                                                  const Refill& refill,
                                                  const std::string& what) const {
  if (pg::classify_sqlstate(error.sqlstate()) != pg::FailureClass::privilege) return {};
  std::optional<Culprit> failing;
  try {
    pg::Transaction txn(conn);  // never committed
    auto work = refill();
    if (!work) return {};
    for (const auto& w : *work) {
      std::vector<Statement> stmts;
      append_hidden(w.transform_id, w.steps, stmts);
      Culprit c;
      if (runs(conn, stmts, &c, true, pg::FailureClass::privilege)) continue;
      c.transform_id = w.transform_id;
      failing = c;
      break;
    }
  } catch (const pg::SqlError& again) {
    if (!conn.healthy()) throw;
    spdlog::warn("finding the transform behind the failure of {} failed: {}", what, again.what());
    return {};
  }
  if (!failing) return {};
  pg::Transaction txn(conn);
  auto r = conn.exec(sql_.halt,
                     {std::to_string(failing->transform_id), failing->error, failing->sqlstate});
  txn.commit();
  std::vector<std::string> paused;
  for (int i = 0; i < r.rows(); ++i) paused.push_back(r.get(i, 0));
  for (const auto& t : paused)
    base::log_event(spdlog::level::warn, "paused", t,
                    {{"kind", "halt"}, {"error", failing->error}, {"sqlstate", failing->sqlstate}},
                    fmt::format("transform {} halted and paused: {} ({})", t, failing->error,
                                failing->sqlstate));
  return paused;
}

}  // namespace trellis::apply
