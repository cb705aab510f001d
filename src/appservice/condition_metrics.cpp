// SPDX-License-Identifier: Apache-2.0
#include "appservice/condition_metrics.h"

#include <array>
#include <string>
#include <string_view>

#include "appservice/conditions.h"
#include "ctrl/cache/object_store.h"
#include "kube/core/json_access.h"

namespace appservice {

namespace {

constexpr std::array<std::string_view, 2> kCounted = {kAvailable, kDegraded};
constexpr std::array<std::string_view, 3> kStatuses = {"True", "False", "Unknown"};

std::size_t status_index(std::string_view status) {
  for (std::size_t i = 0; i < kStatuses.size(); ++i) {
    if (kStatuses[i] == status) return i;
  }
  return 2;  // a status other than True or False says nothing certain: Unknown
}

// The Available and Degraded statuses of one AppService object, read in place.
class ConditionCounts {
 public:
  void add(const rapidjson::Value& object) {
    std::array<std::size_t, kCounted.size()> status{2, 2};  // Unknown until seen
    const auto* list = kube::json::member(kube::json::member(&object, "status"), "conditions");
    if (list && list->IsArray()) {
      for (const auto& c : list->GetArray()) {
        const std::string_view type = text(c, "type");
        for (std::size_t i = 0; i < kCounted.size(); ++i) {
          if (type == kCounted[i]) status[i] = status_index(text(c, "status"));
        }
      }
    }
    for (std::size_t i = 0; i < kCounted.size(); ++i) counts_[i][status[i]] += 1;
  }

  ctrl::MetricsRegistry::Samples samples() const {
    ctrl::MetricsRegistry::Samples out;
    for (std::size_t c = 0; c < kCounted.size(); ++c) {
      for (std::size_t s = 0; s < kStatuses.size(); ++s) {
        out.push_back(
            {{{"condition", std::string(kCounted[c])}, {"status", std::string(kStatuses[s])}},
             counts_[c][s]});
      }
    }
    return out;
  }

 private:
  static std::string_view text(const rapidjson::Value& object, const char* field) {
    return kube::json::string_view(kube::json::member(&object, field));
  }

  std::array<std::array<double, kStatuses.size()>, kCounted.size()> counts_{};
};

}  // namespace

ctrl::MetricsRegistry::Samples condition_samples(const ctrl::ObjectStore& app_services) {
  ConditionCounts counts;
  app_services.for_each([&counts](const rapidjson::Document& object) { counts.add(object); });
  return counts.samples();
}

void register_condition_metrics(ctrl::MetricsRegistry& registry, const ctrl::ObjectStore& store) {
  registry.set_collector("appservice_conditions",
                         "Number of cached AppServices by status of their Available and Degraded "
                         "conditions.",
                         ctrl::MetricType::gauge, [&store] { return condition_samples(store); });
}

}  // namespace appservice
