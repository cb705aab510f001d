// SPDX-License-Identifier: Apache-2.0
#include "ctrl/metrics/rest_client_metrics.h"

#include <glog/logging.h>

#include <utility>

namespace ctrl {

void register_rest_client_metrics(MetricsRegistry& registry,
                                  std::shared_ptr<const kube::RequestMetrics> requests) {
  CHECK(requests != nullptr);
  registry.set_collector(
      "rest_client_requests_total",
      "Number of HTTP requests, partitioned by status code, method, and host.", MetricType::counter,
      [requests = std::move(requests)] {
        MetricsRegistry::Samples samples;
        for (const auto& s : requests->snapshot()) {
          samples.push_back({{{"code", s.code}, {"method", s.method}, {"host", s.host}},
                             static_cast<double>(s.count)});
        }
        return samples;
      });
}

}  // namespace ctrl
