// What this process's workers count as they work, for Prometheus
// (README, "Metrics"): keys each transform's drains re-derived, how long a
// change took to reach its target, changes captured, drain pages failed,
// capture waits. One set per Trellis instance (catalog schema) in the
// process; the drain threads and the staging worker add to it, and
// observe/ serves it beside what the catalog says at scrape time. Counts
// are this process's: Prometheus adds up the processes it scrapes.
#pragma once

#include <memory>
#include <string>

namespace prometheus {
class Registry;
}

namespace trellis::base {

class ProcessMetrics {
 public:
  // The metrics of instance `schema` in this process (made on first use).
  static ProcessMetrics& of(const std::string& schema);

  // A drain page of `target` re-derived `keys` keys and committed
  // `seconds` after the segment holding its changes opened.
  void page_applied(const std::string& target, double keys, double seconds);
  // The staging worker promoted a segment holding `rows` captured changes.
  void changes_captured(double rows);
  void drain_page_failed();
  void capture_wait_started();

  const std::shared_ptr<prometheus::Registry>& registry() const;

  struct Families;
  explicit ProcessMetrics(const std::string& schema);
  ~ProcessMetrics();

 private:
  std::unique_ptr<Families> families_;
};

}  // namespace trellis::base
