// A failed statement with its SQLSTATE, and the classification the engine
// uses to decide between retrying, charging a key and pausing (docs/architecture.md, Failures).
#pragma once

#include <stdexcept>
#include <string>

namespace trellis::pg {

enum class FailureClass {
  transient,  // serialization, deadlock, lock timeout, lost connection: retry, charge nothing
  data,       // bad value for one key (cast, overflow, constraint): bisect and charge
  schema,     // a relation or column is gone or changed
  privilege,  // insufficient privilege
  other,
};

class SqlError : public std::runtime_error {
 public:
  SqlError(std::string sqlstate, const std::string& message, std::string detail = {})
      : std::runtime_error(message), sqlstate_(std::move(sqlstate)), detail_(std::move(detail)) {}
  const std::string& sqlstate() const { return sqlstate_; }
  const std::string& detail() const { return detail_; }
  FailureClass failure_class() const;

 private:
  std::string sqlstate_;
  std::string detail_;
};

// Classifies a SQLSTATE ("" means the connection was lost).
FailureClass classify_sqlstate(const std::string& sqlstate);

// Named SQLSTATEs: code outside this file asks these instead of comparing
// SQLSTATE strings.
bool is_connection_lost(const SqlError& e);        // no SQLSTATE: the connection broke
bool is_lock_not_available(const SqlError& e);     // 55P03, e.g. lock_timeout passed
bool is_undefined_table(const SqlError& e);        // 42P01
bool is_duplicate_table(const SqlError& e);        // 42P07
bool is_duplicate_database(const SqlError& e);     // 42P04
bool is_grouping_error(const SqlError& e);         // 42803
bool is_feature_not_supported(const SqlError& e);  // 0A000

}  // namespace trellis::pg
