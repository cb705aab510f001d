// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>

#include "ctrl/metrics/metrics_registry.h"
#include "kube/http/request_metrics.h"

namespace ctrl {

// Exposes kube::RequestMetrics as client-go's rest_client_requests_total{code,method,host},
// read at scrape time. `requests` is shared so the registry never reads a freed counter set.
void register_rest_client_metrics(MetricsRegistry& registry,
                                  std::shared_ptr<const kube::RequestMetrics> requests);

}  // namespace ctrl
