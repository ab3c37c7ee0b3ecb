// Process metrics; see process_metrics.hpp. prometheus-cpp's families are
// thread-safe: the drain threads add to them without a lock of ours.
#include "base/process_metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <mutex>

namespace trellis::base {

// Commit -> target latency buckets, in seconds: the freshness goal is well
// under a second, so most of the resolution is there.
const prometheus::Histogram::BucketBoundaries kLatencyBuckets = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                                 1,    2.5,   5,    10,  30,   60};

struct ProcessMetrics::Families {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>* keys_applied;
  prometheus::Family<prometheus::Histogram>* latency;
  prometheus::Counter* captured;
  prometheus::Counter* drain_failures;
  prometheus::Counter* capture_waits;
};

ProcessMetrics::ProcessMetrics(const std::string& schema)
    : families_(std::make_unique<Families>()) {
  auto& r = *families_->registry;
  prometheus::Labels instance = {{"trellis_instance", schema}};
  families_->keys_applied =
      &prometheus::BuildCounter()
           .Name("trellis_keys_applied_total")
           .Help("Source keys this process's drains re-derived into the target (per transform)")
           .Labels(instance)
           .Register(r);
  families_->latency =
      &prometheus::BuildHistogram()
           .Name("trellis_apply_latency_seconds")
           .Help(
               "Seconds from the opening of the ring segment holding a change to the commit of "
               "the drain page that applied it to the target: an upper bound of commit to "
               "target (per transform; a chained target counts from its upstream's write)")
           .Labels(instance)
           .Register(r);
  families_->captured = &prometheus::BuildCounter()
                             .Name("trellis_changes_captured_total")
                             .Help(
                                 "Changed keys captured into the ring (counted by the staging "
                                 "worker as it hands segments to the drains)")
                             .Labels(instance)
                             .Register(r)
                             .Add({});
  families_->drain_failures = &prometheus::BuildCounter()
                                   .Name("trellis_drain_page_failures_total")
                                   .Help("Drain pages of this process that failed and were retried")
                                   .Labels(instance)
                                   .Register(r)
                                   .Add({});
  families_->capture_waits = &prometheus::BuildCounter()
                                  .Name("trellis_capture_waits_total")
                                  .Help("Times installing capture started waiting for a lock")
                                  .Labels(instance)
                                  .Register(r)
                                  .Add({});
}

ProcessMetrics::~ProcessMetrics() = default;

ProcessMetrics& ProcessMetrics::of(const std::string& schema) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<ProcessMetrics>> instances;
  std::lock_guard<std::mutex> lock(mutex);
  auto& m = instances[schema];
  if (!m) m = std::make_unique<ProcessMetrics>(schema);
  return *m;
}

void ProcessMetrics::page_applied(const std::string& target, double keys, double seconds) {
  families_->keys_applied->Add({{"target", target}}).Increment(keys);
  families_->latency->Add({{"target", target}}, kLatencyBuckets).Observe(seconds);
}

void ProcessMetrics::changes_captured(double rows) {
  families_->captured->Increment(rows);
}

void ProcessMetrics::drain_page_failed() {
  families_->drain_failures->Increment();
}

void ProcessMetrics::capture_wait_started() {
  families_->capture_waits->Increment();
}

const std::shared_ptr<prometheus::Registry>& ProcessMetrics::registry() const {
  return families_->registry;
}

}  // namespace trellis::base
