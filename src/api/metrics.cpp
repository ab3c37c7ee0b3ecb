// Prometheus metrics (README, "Metrics"): metrics_text() and, when
// Options::metrics_address is set, an HTTP endpoint serving the same text
// at /metrics. Two sources: what this process's workers counted
// (base/process_metrics: keys applied, apply latency, changes captured,
// failed pages, capture waits) and what the catalog says at scrape time,
// the same for every process (transform status, builds' progress, held
// keys, pauses by cause, drain failures, capture waits, the ring's backlog
// and segments, live workers). Every series carries the label
// `trellis_instance` (the catalog schema): Prometheus sets `instance` to
// the scraped address itself, and a label of that name would be renamed.
#include <fmt/format.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "api/instance.hpp"
#include "base/process_metrics.hpp"
#include "catalog/report.hpp"
#include "ring/backlog.hpp"

namespace trellis::api {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

class Families {
 public:
  explicit Families(std::string instance) : instance_(std::move(instance)) {}

  MetricFamily& family(const std::string& name, const std::string& help) {
    for (auto& f : out_)
      if (f.name == name) return f;
    out_.push_back({name, help, MetricType::Gauge, {}});
    return out_.back();
  }
  void gauge(const std::string& name, const std::string& help, double value,
             std::vector<ClientMetric::Label> labels = {}) {
    ClientMetric m;
    m.label.push_back({"trellis_instance", instance_});
    for (auto& l : labels) m.label.push_back(std::move(l));
    m.gauge.value = value;
    family(name, help).metric.push_back(std::move(m));
  }
  std::vector<MetricFamily> take() { return std::move(out_); }

 private:
  std::string instance_;
  std::vector<MetricFamily> out_;
};

const char* const kStatuses[] = {"waiting_to_backfill", "backfilling", "live", "paused",
                                 "quarantined"};

// What paused a transform: the capture failure's kind, else the operator;
// a quarantined one its fuse.
std::string pause_cause(const catalog::TransformReport& r) {
  if (r.def.status == catalog::Status::quarantined) return "quarantine";
  if (r.capture_failure) return r.capture_failure->value("kind", "operator");
  return "operator";
}

// The catalog's view, read at scrape time.
class CatalogCollectable : public prometheus::Collectable {
 public:
  explicit CatalogCollectable(Trellis::Impl& impl) : impl_(impl) {}

  std::vector<MetricFamily> Collect() const override {
    Families f(impl_.store.schema());
    try {
      auto conn = impl_.pool.acquire();
      collect_transforms(*conn, f);
      collect_ring(*conn, f);
      for (const auto& [kind, n] : live_workers(*conn, impl_.store.schema()))
        f.gauge("trellis_workers", "Live worker connections by kind (drain threads, staging)",
                static_cast<double>(n), {{"kind", kind}});
      f.gauge("trellis_catalog_up", "1 when the catalog could be read for this scrape", 1);
    } catch (const std::exception& e) {
      spdlog::warn("metrics: the catalog could not be read: {}", e.what());
      Families down(impl_.store.schema());
      down.gauge("trellis_catalog_up", "1 when the catalog could be read for this scrape", 0);
      return down.take();
    }
    return f.take();
  }

 private:
  void collect_transforms(pg::Connection& conn, Families& f) const {
    std::map<std::string, int> paused = {
        {"operator", 0}, {"capture", 0}, {"disruption", 0}, {"halt", 0}, {"quarantine", 0}};
    for (const auto& r : catalog::read_reports(conn, impl_.store, std::nullopt)) {
      std::string status(catalog::name(r.def.status));
      for (const char* s : kStatuses)
        f.gauge("trellis_transform_status", "1 for the status the transform is in, else 0",
                status == s ? 1 : 0, {{"target", r.target}, {"status", s}});
      if (r.def.status == catalog::Status::backfilling) {
        f.gauge("trellis_build_rows_done", "Source rows a transform's build has written",
                static_cast<double>(r.build_rows_done), {{"target", r.target}});
        f.gauge("trellis_build_rows_total", "Source rows a transform's build will write (estimate)",
                static_cast<double>(r.build_rows_estimate), {{"target", r.target}});
      }
      f.gauge("trellis_held_keys", "Source keys held in quarantine for the transform",
              static_cast<double>(r.held_keys), {{"target", r.target}});
      f.gauge("trellis_drain_failing", "1 while the transform's drain pages keep failing",
              r.drain_failure ? 1 : 0, {{"target", r.target}});
      f.gauge("trellis_capture_waiting",
              "1 while installing capture for the transform waits for a lock",
              r.capture_wait ? 1 : 0, {{"target", r.target}});
      f.gauge("trellis_partitions_correcting",
              "Partition events the transform is being corrected for (status() correcting)",
              static_cast<double>(r.correcting.size()), {{"target", r.target}});
      if (r.def.status == catalog::Status::paused || r.def.status == catalog::Status::quarantined)
        ++paused[pause_cause(r)];
    }
    for (const auto& [cause, n] : paused)
      f.gauge("trellis_transforms_paused", "Transforms paused or quarantined, by cause", n,
              {{"cause", cause}});
  }

  void collect_ring(pg::Connection& conn, Families& f) const {
    auto backlog = ring::read_backlog(conn, impl_.store.schema());
    for (const char* state : {"active", "sealed", "ready", "drained", "retired"}) {
      auto it = backlog.segments.find(state);
      f.gauge("trellis_ring_segments", "Ring segments by state",
              it == backlog.segments.end() ? 0 : static_cast<double>(it->second),
              {{"state", state}});
    }
    f.gauge("trellis_ring_backlog_rows", "Changed keys in the ring no drain has finished",
            static_cast<double>(backlog.rows));
    f.gauge("trellis_ring_bytes", "Bytes of the ring's slot tables, indexes included",
            static_cast<double>(backlog.bytes));
  }

  Trellis::Impl& impl_;
};

}  // namespace

struct MetricsEndpoint {
  std::shared_ptr<CatalogCollectable> catalog;
  std::unique_ptr<prometheus::Exposer> exposer;
};

std::shared_ptr<MetricsEndpoint> metrics_endpoint(Trellis::Impl& impl) {
  std::lock_guard<std::mutex> lock(impl.metrics_mutex);
  if (!impl.metrics) {
    impl.metrics = std::make_shared<MetricsEndpoint>();
    impl.metrics->catalog = std::make_shared<CatalogCollectable>(impl);
  }
  return impl.metrics;
}

std::string metrics_text(Trellis::Impl& impl) {
  auto endpoint = metrics_endpoint(impl);
  auto families = base::ProcessMetrics::of(impl.store.schema()).registry()->Collect();
  for (auto& f : endpoint->catalog->Collect()) families.push_back(std::move(f));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

void serve_metrics(Trellis::Impl& impl, const std::string& address) {
  auto endpoint = metrics_endpoint(impl);
  try {
    endpoint->exposer = std::make_unique<prometheus::Exposer>(address, 1);
  } catch (const std::exception& e) {
    throw Error(
        ErrorCode::validation,
        fmt::format("cannot serve metrics on {}: {}; pass a free HOST:PORT", address, e.what()));
  }
  endpoint->exposer->RegisterCollectable(base::ProcessMetrics::of(impl.store.schema()).registry());
  endpoint->exposer->RegisterCollectable(endpoint->catalog);
}

int metrics_port(Trellis::Impl& impl) {
  auto endpoint = metrics_endpoint(impl);
  if (!endpoint->exposer) return 0;
  auto ports = endpoint->exposer->GetListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

void stop_metrics(Trellis::Impl& impl) {
  std::lock_guard<std::mutex> lock(impl.metrics_mutex);
  if (impl.metrics) impl.metrics->exposer.reset();
}

}  // namespace trellis::api
