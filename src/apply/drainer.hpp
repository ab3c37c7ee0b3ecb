// Drains one claim (a segment's bucket, or several small buckets of one
// segment together): pages of distinct keys, each page re-derived for every
// reader transform and marked in one transaction (I4).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "apply/quarantine.hpp"
#include "apply/rederive.hpp"
#include "base/process_metrics.hpp"
#include "catalog/lifecycle.hpp"
#include "catalog/store.hpp"
#include "compile/drain_sql.hpp"
#include "pg/connection.hpp"

namespace trellis::apply {

struct DrainConfig {
  int page_cap = 4000;  // distinct keys per page (I8)
  // The drain threads a segment needing several pages is split among: its
  // small buckets are claimed in shares of about the same size, as many as
  // a multiple of this (compile/drain_sql, claim_bucket).
  int threads = 1;
};

class Drainer {
 public:
  Drainer(catalog::Store& store, DrainConfig config);

  // Claims one ready bucket and drains it to the end. Returns false when no
  // bucket was ready. Failures release the claim with a backoff and are
  // recorded as drain_failure on the readers; they are not rethrown unless
  // the connection is lost.
  bool drain_one(pg::Connection& conn);
  // True (once) after a committed page wrote to a target that is itself
  // captured: the next hop's keys are waiting in the active slot.
  bool take_fed_downstream() { return std::exchange(fed_downstream_, false); }
  // True (once) after drain_one claimed nothing while a ready bucket was
  // unowned: another thread's claim held it locked for a moment, and a
  // claim tried again at once may find the buckets that one leaves.
  bool take_contended() { return std::exchange(contended_, false); }

 private:
  bool fed_downstream_ = false;
  bool contended_ = false;

  struct Page {
    std::optional<std::string> cursor;
    bool last = true;
    int64_t keys = 0;    // keys filled into the page
    bool feeds = false;  // some reader's target is itself captured
    std::set<int> tables;
    std::vector<TransformWork> work;  // per reader, in lock order (I5)
  };

  // The claimed buckets of one segment; `buckets` is their int2[] literal.
  struct Claim {
    std::string seg;
    std::string buckets;
    int count = 0;
    // Ring rows of the claim's buckets (unknown for segments staged before
    // bucket summaries: counted as more than a page).
    int64_t ring_rows = 0;
  };

  std::optional<Page> fill_page(pg::Connection& conn, const Claim& claim);
  pg::Result fill_in_index_order(pg::Connection& conn, const Statement& fill) const;
  bool drain_page(pg::Connection& conn, const Claim& claim);
  // The park statement of a building transform (catalog
  // Lifecycle::park_statement), cached per id and version.
  const std::string& park_for(const catalog::TransformDef& def);

  void record_failure(pg::Connection& conn, const Claim& claim, const std::string& error,
                      const std::string& sqlstate);

  catalog::Store& store_;
  DrainConfig config_;
  compile::DrainSql sql_;
  catalog::DrainFailureStatements failures_;
  catalog::Lifecycle lifecycle_;
  // Park statements by transform id: (version, statement).
  std::map<int, std::pair<int, std::string>> parks_;
  Rederiver rederiver_;
  Quarantine quarantine_;
  base::ProcessMetrics& metrics_;  // this instance's, looked up once, not per page
};

}  // namespace trellis::apply
