// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ctrl/cache/object_store.h"
#include "ctrl/metrics/metrics_registry.h"

namespace appservice {

// appservice_conditions{condition, status}: how many cached AppServices have each status of the
// Available and Degraded conditions, as kube-state-metrics counts conditions. An AppService
// without the condition yet (just created) counts as Unknown. Every series is always present, at
// 0 when no AppService has that status, so alerts see a value rather than no data.
ctrl::MetricsRegistry::Samples condition_samples(const ctrl::ObjectStore& app_services);

// Computes the family at scrape time from the informer's cache: no API call, no bookkeeping on
// the reconcile path. The store must outlive the registry's use of it.
void register_condition_metrics(ctrl::MetricsRegistry& registry, const ctrl::ObjectStore& store);

}  // namespace appservice
