// SQLSTATE classification (docs/architecture.md, Failures): what may be retried as is, what is a
// bad value for one key, and what means the schema or privileges changed.
#include "pg/sql_error.hpp"

namespace trellis::pg {

FailureClass classify_sqlstate(const std::string& s) {
  if (s.empty()) return FailureClass::transient;  // connection lost
  if (s == "40001" || s == "40P01" || s == "55P03" || s == "57014" || s == "53300" ||
      s == "57P01" || s == "57P02" || s == "57P03" || s.rfind("08", 0) == 0)
    return FailureClass::transient;
  if (s == "42501") return FailureClass::privilege;
  if (s == "42P01" || s == "42703" || s == "42883" || s == "42804" || s == "0A000")
    return FailureClass::schema;
  if (s.rfind("22", 0) == 0 || s.rfind("23", 0) == 0) return FailureClass::data;
  return FailureClass::other;
}

FailureClass SqlError::failure_class() const {
  return classify_sqlstate(sqlstate_);
}

bool is_connection_lost(const SqlError& e) {
  return e.sqlstate().empty();
}
bool is_lock_not_available(const SqlError& e) {
  return e.sqlstate() == "55P03";
}
bool is_undefined_table(const SqlError& e) {
  return e.sqlstate() == "42P01";
}
bool is_duplicate_table(const SqlError& e) {
  return e.sqlstate() == "42P07";
}
bool is_duplicate_database(const SqlError& e) {
  return e.sqlstate() == "42P04";
}
bool is_grouping_error(const SqlError& e) {
  return e.sqlstate() == "42803";
}
bool is_feature_not_supported(const SqlError& e) {
  return e.sqlstate() == "0A000";
}

}  // namespace trellis::pg
