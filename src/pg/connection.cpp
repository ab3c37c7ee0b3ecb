// Connection, Result and Transaction over libpq. Errors become pg::SqlError
// carrying the SQLSTATE so callers can classify them; a lost connection is a
// SqlError with an empty SQLSTATE.
#include "pg/connection.hpp"

#include <fmt/format.h>
#include <libpq-fe.h>
#include <poll.h>

#include <cstdlib>

#include "pg/sql_error.hpp"
#include "trellis/error.hpp"

namespace trellis::pg {

namespace {

SqlError error_from_result(PGconn* conn, PGresult* res) {
  const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  const char* primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  const char* detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : nullptr;
  std::string message = primary ? primary : PQerrorMessage(conn);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  // libpq's own errors (a closed socket, a protocol failure) carry no
  // SQLSTATE; they mean the connection is unusable.
  bool lost = PQstatus(conn) != CONNECTION_OK || state == nullptr;
  return SqlError(lost ? "" : state, message, detail ? detail : "");
}

bool result_ok(PGresult* res) {
  auto st = PQresultStatus(res);
  return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_PIPELINE_SYNC;
}

struct ParamArrays {
  std::vector<const char*> values;
  explicit ParamArrays(const std::vector<Param>& params) {
    values.reserve(params.size());
    for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  }
};

// jit is off: Trellis's statements are bounded by a page or a range, and
// the planner's estimates over its statistics-less temporary tables run high
// enough to start JIT compilation, which cost 60 ms of a 90 ms page.
std::string pin_statement(const SessionPins& pins) {
  return fmt::format(
      "SET search_path = {}; SET DateStyle = 'ISO, YMD'; SET TimeZone = 'UTC'; "
      "SET IntervalStyle = 'iso_8601'; SET bytea_output = 'hex'; SET extra_float_digits = 3; "
      "SET row_security = off; SET jit = off; SET lock_timeout = {}; SET statement_timeout = {}; "
      "SET client_min_messages = warning; SET application_name = '{}'",
      pins.search_path, pins.lock_timeout.count(), pins.statement_timeout.count(),
      pins.application_name);
}

}  // namespace

Result::Result(pg_result* res) : res_(res) {}
Result::Result(Result&& other) noexcept : res_(other.res_) {
  other.res_ = nullptr;
}
Result& Result::operator=(Result&& other) noexcept {
  if (this != &other) {
    if (res_) PQclear(res_);
    res_ = other.res_;
    other.res_ = nullptr;
  }
  return *this;
}
Result::~Result() {
  if (res_) PQclear(res_);
}
int Result::rows() const {
  return res_ ? PQntuples(res_) : 0;
}
int Result::columns() const {
  return res_ ? PQnfields(res_) : 0;
}
bool Result::is_null(int row, int col) const {
  return PQgetisnull(res_, row, col) != 0;
}
std::string Result::get(int row, int col) const {
  return is_null(row, col) ? std::string() : std::string(PQgetvalue(res_, row, col));
}
std::optional<std::string> Result::get_opt(int row, int col) const {
  if (is_null(row, col)) return std::nullopt;
  return std::string(PQgetvalue(res_, row, col));
}
int64_t Result::get_int(int row, int col) const {
  return is_null(row, col) ? 0 : std::strtoll(PQgetvalue(res_, row, col), nullptr, 10);
}
bool Result::get_bool(int row, int col) const {
  return !is_null(row, col) && PQgetvalue(res_, row, col)[0] == 't';
}
std::string Result::column_name(int col) const {
  return PQfname(res_, col);
}
unsigned Result::column_type(int col) const {
  return PQftype(res_, col);
}
int64_t Result::affected() const {
  const char* n = res_ ? PQcmdTuples(res_) : "";
  return (n && *n) ? std::strtoll(n, nullptr, 10) : 0;
}

std::unique_ptr<Connection> Connection::open(const std::string& url, const SessionPins& pins) {
  PGconn* conn = PQconnectdb(url.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(conn);
    PQfinish(conn);
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    throw Error(ErrorCode::connectivity,
                fmt::format("cannot connect to PostgreSQL: {} (check the database URL, "
                            "--database-url or TRELLIS_DATABASE_URL)",
                            msg));
  }
  std::unique_ptr<Connection> c(new Connection(conn));
  c->exec_script(pin_statement(pins));
  return c;
}

Connection::Connection(pg_conn* conn) : conn_(conn) {}
Connection::~Connection() {
  PQfinish(conn_);
}

Result Connection::take_result(PGresult* res) {
  if (!result_ok(res)) {
    auto err = error_from_result(conn_, res);
    PQclear(res);
    fail(err);
  }
  return Result(res);
}

Result Connection::exec(std::string_view sql, const std::vector<Param>& params) {
  std::string text(sql);
  ParamArrays arrays(params);
  return take_result(PQexecParams(conn_, text.c_str(), static_cast<int>(params.size()), nullptr,
                                  arrays.values.data(), nullptr, nullptr, 0));
}

Result Connection::exec_prepared(std::string_view sql, const std::vector<Param>& params) {
  std::string text(sql);
  auto it = prepared_.find(text);
  if (it == prepared_.end()) {
    if (prepared_.size() >= kPreparedCap) {
      take_result(PQexec(conn_, "DEALLOCATE ALL"));
      prepared_.clear();
    }
    // Names are never reused, so a statement forgotten after an error below
    // cannot collide with a later one.
    std::string name = fmt::format("trellis_{}", ++prepared_serial_);
    take_result(
        PQprepare(conn_, name.c_str(), text.c_str(), static_cast<int>(params.size()), nullptr));
    it = prepared_.emplace(std::move(text), std::move(name)).first;
  }
  ParamArrays arrays(params);
  try {
    return take_result(PQexecPrepared(conn_, it->second.c_str(), static_cast<int>(params.size()),
                                      arrays.values.data(), nullptr, nullptr, 0));
  } catch (const SqlError& e) {
    // "cached plan must not change result type": a table it reads changed
    // shape under it. Prepare afresh on the next call.
    if (is_feature_not_supported(e)) prepared_.erase(it);
    throw;
  }
}

void Connection::exec_script(std::string_view sql) {
  std::string text(sql);
  if (!PQsendQuery(conn_, text.c_str())) fail(error_from_result(conn_, nullptr));
  std::optional<SqlError> failure;
  while (PGresult* res = PQgetResult(conn_)) {
    if (!result_ok(res) && !failure) failure = error_from_result(conn_, res);
    PQclear(res);
  }
  if (failure) fail(*failure);
}

void Connection::fail(const SqlError& err) {
  if (is_connection_lost(err)) broken_ = true;
  throw err;
}

std::vector<Result> Connection::pipeline(
    const std::vector<std::pair<std::string, std::vector<Param>>>& stmts) {
  if (!PQenterPipelineMode(conn_)) throw error_from_result(conn_, nullptr);
  for (const auto& [sql, params] : stmts) {
    ParamArrays arrays(params);
    if (!PQsendQueryParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr,
                           arrays.values.data(), nullptr, nullptr, 0)) {
      auto err = error_from_result(conn_, nullptr);
      PQexitPipelineMode(conn_);
      throw err;
    }
  }
  // Without its sync, no result ends the loop below: a connection that
  // cannot take the sync is given up.
  if (!PQpipelineSync(conn_)) {
    auto err = error_from_result(conn_, nullptr);
    broken_ = true;
    throw err;
  }
  std::vector<Result> results;
  std::optional<SqlError> failure;
  // One NULL ends each statement's results; more than that before the sync
  // means the sync will not come (the connection is lost, or libpq's queue
  // lost it), and waiting for it would spin forever.
  std::size_t ends = 0;
  for (;;) {
    PGresult* res = PQgetResult(conn_);
    if (!res) {
      if (PQstatus(conn_) == CONNECTION_OK && ++ends <= stmts.size()) continue;
      if (!failure)
        failure = PQstatus(conn_) == CONNECTION_OK
                      ? SqlError("", "the pipeline's results ended before its sync")
                      : error_from_result(conn_, nullptr);
      broken_ = true;
      break;
    }
    auto st = PQresultStatus(res);
    if (st == PGRES_PIPELINE_SYNC) {
      PQclear(res);
      break;
    }
    if (st == PGRES_PIPELINE_ABORTED) {
      PQclear(res);
      continue;
    }
    if (!result_ok(res)) {
      if (!failure) failure = error_from_result(conn_, res);
      PQclear(res);
      if (PQstatus(conn_) != CONNECTION_OK) break;
      continue;
    }
    results.emplace_back(res);
  }
  PQexitPipelineMode(conn_);
  if (failure) fail(*failure);
  return results;
}

std::vector<std::pair<std::string, unsigned>> Connection::describe(std::string_view sql) {
  std::string text(sql);
  Result prepared(PQprepare(conn_, "", text.c_str(), 0, nullptr));
  if (!result_ok(prepared.raw())) throw error_from_result(conn_, prepared.raw());
  Result desc(PQdescribePrepared(conn_, ""));
  if (!result_ok(desc.raw())) throw error_from_result(conn_, desc.raw());
  std::vector<std::pair<std::string, unsigned>> cols;
  for (int i = 0; i < PQnfields(desc.raw()); ++i)
    cols.emplace_back(PQfname(desc.raw(), i), PQftype(desc.raw(), i));
  return cols;
}

std::vector<std::string> Connection::wait_notifications(std::chrono::milliseconds timeout) {
  std::vector<std::string> channels;
  auto drain = [&] {
    PQconsumeInput(conn_);
    while (PGnotify* n = PQnotifies(conn_)) {
      channels.emplace_back(n->relname);
      PQfreemem(n);
    }
  };
  drain();
  if (!channels.empty()) return channels;
  pollfd pfd{PQsocket(conn_), POLLIN, 0};
  if (pfd.fd < 0) throw SqlError("", "connection lost while waiting for notifications");
  if (poll(&pfd, 1, static_cast<int>(timeout.count())) > 0) {
    if (!PQconsumeInput(conn_)) throw error_from_result(conn_, nullptr);
    drain();
  }
  return channels;
}

void Connection::cancel() {
  PGcancel* c = PQgetCancel(conn_);
  if (!c) return;
  char buf[256];
  PQcancel(c, buf, sizeof buf);
  PQfreeCancel(c);
}

bool Connection::healthy() const {
  return !broken_ && PQstatus(conn_) == CONNECTION_OK;
}
int Connection::backend_pid() const {
  return PQbackendPID(conn_);
}

std::string Connection::quote_ident(std::string_view ident) const {
  char* q = PQescapeIdentifier(conn_, ident.data(), ident.size());
  std::string out = q ? q : "";
  PQfreemem(q);
  return out;
}

std::string Connection::quote_literal(std::string_view text) const {
  char* q = PQescapeLiteral(conn_, text.data(), text.size());
  std::string out = q ? q : "";
  PQfreemem(q);
  return out;
}

Transaction::Transaction(Connection& conn, std::string_view begin) : conn_(conn) {
  conn_.exec(begin);
}
Transaction::~Transaction() {
  if (done_ || !conn_.healthy()) return;
  try {
    conn_.exec("ROLLBACK");
  } catch (...) {
  }
}
void Transaction::commit() {
  conn_.exec("COMMIT");
  done_ = true;
}

std::vector<Result> Savepoint::around(Connection& conn, const std::string& name,
                                      const Statements& stmts, bool keep) {
  Statements all;
  all.push_back({"SAVEPOINT " + name, {}});
  all.insert(all.end(), stmts.begin(), stmts.end());
  all.push_back({(keep ? "RELEASE SAVEPOINT " : "ROLLBACK TO SAVEPOINT ") + name, {}});
  try {
    auto results = conn.pipeline(all);
    results.pop_back();
    results.erase(results.begin());
    return results;
  } catch (const SqlError&) {
    // After a failure PostgreSQL skipped the rest, the RELEASE included.
    if (conn.healthy()) conn.exec("ROLLBACK TO SAVEPOINT " + name);
    throw;
  }
}

Savepoint::Savepoint(Connection& conn, std::string name) : conn_(conn), name_(std::move(name)) {
  conn_.exec("SAVEPOINT " + name_);
}
Savepoint::~Savepoint() {
  if (done_ || !conn_.healthy()) return;
  try {
    conn_.exec("ROLLBACK TO SAVEPOINT " + name_);
  } catch (...) {
  }
}
void Savepoint::release() {
  conn_.exec("RELEASE SAVEPOINT " + name_);
  done_ = true;
}
void Savepoint::rollback() {
  done_ = true;
  conn_.exec("ROLLBACK TO SAVEPOINT " + name_);
}

}  // namespace trellis::pg
