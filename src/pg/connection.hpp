// RAII over libpq: a Connection owns one PGconn with Trellis's pinned session
// settings (README); a Result owns one PGresult. Every libpq call in the
// project lives under src/pg/.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

struct pg_conn;
struct pg_result;

namespace trellis::pg {

// A query parameter: text format, or SQL NULL.
using Param = std::optional<std::string>;

class SqlError;

class Result {
 public:
  Result() = default;
  explicit Result(pg_result* res);
  Result(Result&&) noexcept;
  Result& operator=(Result&&) noexcept;
  ~Result();

  int rows() const;
  int columns() const;
  bool is_null(int row, int col) const;
  std::string get(int row, int col) const;  // "" for NULL
  std::optional<std::string> get_opt(int row, int col) const;
  int64_t get_int(int row, int col) const;
  bool get_bool(int row, int col) const;
  std::string column_name(int col) const;
  unsigned column_type(int col) const;  // type oid
  int64_t affected() const;             // PQcmdTuples as a number (0 when none)
  pg_result* raw() const { return res_; }

 private:
  pg_result* res_ = nullptr;
};

struct SessionPins {
  std::string search_path = "pg_catalog";
  std::string application_name = "trellis";
  std::chrono::milliseconds lock_timeout{5000};
  std::chrono::milliseconds statement_timeout{0};  // 0: none
};

class Connection {
 public:
  // Opens a connection and pins the session settings. Throws
  // trellis::Error(connectivity) when the server cannot be reached.
  static std::unique_ptr<Connection> open(const std::string& url, const SessionPins& pins = {});
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one statement (optionally with text parameters). Throws pg::SqlError.
  Result exec(std::string_view sql, const std::vector<Param>& params = {});
  // Runs a statement whose text never changes (a poll, a claim, a catalog
  // read) through a named prepared statement made on its first use on this
  // connection: repeats skip parsing and, once PostgreSQL settles on a
  // generic plan, planning. Not for statements whose best plan depends on
  // their parameters. At most kPreparedCap are kept per connection.
  Result exec_prepared(std::string_view sql, const std::vector<Param>& params = {});
  static constexpr size_t kPreparedCap = 64;
  // Runs a script of several statements with no parameters (simple protocol).
  void exec_script(std::string_view sql);

  // Runs the statements back to back in pipeline mode (one round trip), each
  // with its own parameters; throws the first failure after draining. A
  // connection lost on the way throws at once and leaves the Connection
  // unhealthy, never waiting for a sync that cannot come.
  std::vector<Result> pipeline(
      const std::vector<std::pair<std::string, std::vector<Param>>>& stmts);

  // Prepares `sql` unnamed and returns the result columns' (name, type oid).
  std::vector<std::pair<std::string, unsigned>> describe(std::string_view sql);

  // LISTEN support: waits up to `timeout` for a notification on the socket.
  // Returns the channels that fired (possibly empty on timeout).
  std::vector<std::string> wait_notifications(std::chrono::milliseconds timeout);

  // Cancels the statement running on this connection (thread-safe).
  void cancel();

  bool healthy() const;
  int backend_pid() const;
  std::string quote_ident(std::string_view ident) const;
  std::string quote_literal(std::string_view text) const;

 private:
  explicit Connection(pg_conn* conn);
  [[noreturn]] void fail(const SqlError& err);
  Result take_result(pg_result* res);
  pg_conn* conn_;
  bool broken_ = false;
  std::unordered_map<std::string, std::string> prepared_;  // SQL text -> statement name
  int64_t prepared_serial_ = 0;
};

// RAII transaction: BEGIN on construction, ROLLBACK unless commit() was called.
class Transaction {
 public:
  explicit Transaction(Connection& conn, std::string_view begin = "BEGIN");
  ~Transaction();
  void commit();

 private:
  Connection& conn_;
  bool done_ = false;
};

// RAII savepoint inside an open transaction: SAVEPOINT <name> on
// construction. release() keeps what ran since, rollback() undoes it (the
// savepoint stays, as ROLLBACK TO leaves it); either throws pg::SqlError on
// failure. Unless one of them was called, the destructor rolls back to the
// savepoint; it never throws and sends nothing on a broken connection.
// `name` is a plain identifier, written as is.
class Savepoint {
 public:
  using Statements = std::vector<std::pair<std::string, std::vector<Param>>>;
  // `stmts` in one round trip inside savepoint `name`: SAVEPOINT, the
  // statements, then RELEASE when `keep`, else ROLLBACK TO. On an error the
  // savepoint is rolled back and the error rethrown. Returns the
  // statements' own results.
  static std::vector<Result> around(Connection& conn, const std::string& name,
                                    const Statements& stmts, bool keep);

  Savepoint(Connection& conn, std::string name);
  ~Savepoint();
  Savepoint(const Savepoint&) = delete;
  Savepoint& operator=(const Savepoint&) = delete;
  void release();
  void rollback();

 private:
  Connection& conn_;
  std::string name_;
  bool done_ = false;
};

}  // namespace trellis::pg
