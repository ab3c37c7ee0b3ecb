// Finding and charging the key behind a data error (docs/architecture.md, Failures). When a
// page (or a build chunk) fails with a data error, the same work is redone
// in a transaction that is always rolled back: each transform's steps run
// under a savepoint, and the first one that fails has its keys of the page
// halved until a single failing key remains. That key is then charged in a
// transaction of its own; after 5 charges it is held for that transform,
// which the page then runs without, and 5 held keys trip the transform's
// fuse. For a 1-1 transform the key is also narrowed to the field it fails
// in; 5 keys held for one field pause just that field instead (the column
// fuse) and rebuild the transform without it. A privilege error is nobody's key: the transform
// whose steps fail with it is halted instead (paused with everything reading its target,
// capture_failure kind 'halt'), since no retry gets past it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "apply/rederive.hpp"
#include "compile/quarantine_sql.hpp"
#include "pg/sql_error.hpp"

namespace trellis::apply {

struct Culprit {
  int transform_id = 0;
  int tbl = 0;
  std::string key;  // text[] literal
  std::string error;
  std::string sqlstate;
  std::string column;  // the field of a 1-1 target it fails in ("" when not one field)
};

// One transform's part of the failed work: the statements it ran for the
// page (its held keys hidden first, restored after).
struct TransformWork {
  int transform_id = 0;
  std::string target;  // schema.table, for metrics
  int source_table_id = 0;
  std::vector<Statement> steps;
  // For a 1-1 transform: its definition, to narrow a failing key down to the
  // field it fails in.
  std::optional<catalog::TransformDef> one_to_one;
};

class Quarantine {
 public:
  explicit Quarantine(const std::string& catalog_schema);

  // Wraps one transform's steps so its held keys stay out of the page.
  void append_hidden(int transform_id, const std::vector<Statement>& steps,
                     std::vector<Statement>& out) const;

  // Fills the page inside the isolating transaction and returns the work to
  // redo, or nothing when it is gone (e.g. the claim was lost).
  using Refill = std::function<std::optional<std::vector<TransformWork>>()>;

  // What charging did: the key is now held (the work goes on at once
  // without it), or the work is to be retried after retry_ms (growing with
  // the key's charges).
  struct Charged {
    bool held = false;
    int retry_ms = 0;
  };

  // After work failed with `error`: when it is a data error, finds the key
  // behind it (redoing the work as `refill` gives it) and charges that key
  // against `seg` (the held change's segment; none for a build). Nothing
  // when the error is of another class or no single key is to blame;
  // `what` names the work in the log.
  std::optional<Charged> charge_failure(pg::Connection& conn, const pg::SqlError& error,
                                        const Refill& refill, const pg::Param& seg,
                                        const std::string& what) const;

  // After work failed with a privilege error: finds the transform whose
  // steps fail with one and halts it. Returns the targets paused (empty when
  // the error is of another class or no transform fails on its own).
  std::vector<std::string> halt_failure(pg::Connection& conn, const pg::SqlError& error,
                                        const Refill& refill, const std::string& what) const;

 private:
  // Redoes the work in a rolled-back transaction: `refill` fills the page,
  // then each transform's steps run. Returns the failing key, or nothing
  // when no single key fails on its own.
  std::optional<Culprit> isolate(pg::Connection& conn, const Refill& refill) const;
  // Charges the key in its own transaction.
  Charged charge(pg::Connection& conn, const Culprit& culprit, const pg::Param& seg) const;
  std::optional<Culprit> bisect(pg::Connection& conn, const TransformWork& work) const;
  // The field the key saved as number `number` fails in, or "".
  std::string failing_field(pg::Connection& conn, const TransformWork& work, int64_t number) const;
  // Runs `stmts` under a savepoint; an error of class `counted` makes it
  // return false (filling `failure`), any other error is rethrown.
  bool runs(pg::Connection& conn, const std::vector<Statement>& stmts, Culprit* failure, bool keep,
            pg::FailureClass counted = pg::FailureClass::data) const;

  compile::QuarantineSql sql_;
};

}  // namespace trellis::apply
