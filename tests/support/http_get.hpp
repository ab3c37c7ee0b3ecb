// A plain HTTP/1.0 GET over a TCP socket, for tests that scrape the metrics
// endpoint as Prometheus would.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trellis::test {

struct HttpResponse {
  int status = 0;  // 0 when nothing answered
  std::string headers;
  std::string body;
};

HttpResponse http_get(const std::string& host, int port, const std::string& path);

// The value of the sample of `metric` whose labels include every one of
// `labels` (each `name="value"`) in Prometheus text, or nullopt.
std::optional<double> sample(const std::string& text, const std::string& metric,
                             const std::vector<std::string>& labels);

}  // namespace trellis::test
