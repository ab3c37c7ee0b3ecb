// Keeps capture triggers in step with the catalog (DESIGN §4.1). Run by the
// staging worker every tick: installs or widens capture for tables that new
// or resumed transforms read, then moves those transforms to backfilling;
// removes capture from tables nothing reads any more.
#pragma once

#include "catalog/store.hpp"
#include "compile/capture.hpp"
#include "pg/connection.hpp"

namespace trellis::capture {

class Reconciler {
 public:
  Reconciler(catalog::Store& store, compile::RingShape ring);
  // Returns true when some transform started backfilling (drains should wake).
  bool reconcile(pg::Connection& conn);

 private:
  bool install(pg::Connection& conn, const catalog::CapturedTable& table,
               const std::vector<catalog::Column>& reads, const std::string& signature);
  void uninstall(pg::Connection& conn, const catalog::CapturedTable& table);
  void record_wait(pg::Connection& conn, const catalog::CapturedTable& table);
  void record_failure(pg::Connection& conn, const catalog::CapturedTable& table,
                      const std::string& error);

  catalog::Store& store_;
  compile::RingShape ring_;
};

}  // namespace trellis::capture
