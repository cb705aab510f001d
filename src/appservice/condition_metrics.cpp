#include "appservice/condition_metrics.h"

#include <array>
#include <string>
#include <string_view>

#include "appservice/conditions.h"

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

}  // namespace

ctrl::MetricsRegistry::Samples condition_samples(const std::vector<ctrl::ObjectPtr>& app_services) {
  std::array<std::array<double, kStatuses.size()>, kCounted.size()> counts{};
  for (const auto& object : app_services) {
    if (!object) continue;
    const auto conditions = parse_conditions(*object);
    for (std::size_t c = 0; c < kCounted.size(); ++c) {
      std::size_t s = 2;
      for (const auto& condition : conditions) {
        if (condition.type == kCounted[c]) s = status_index(condition.status);
      }
      counts[c][s] += 1;
    }
  }
  ctrl::MetricsRegistry::Samples out;
  for (std::size_t c = 0; c < kCounted.size(); ++c) {
    for (std::size_t s = 0; s < kStatuses.size(); ++s) {
      out.push_back(
          {{{"condition", std::string(kCounted[c])}, {"status", std::string(kStatuses[s])}},
           counts[c][s]});
    }
  }
  return out;
}

void register_condition_metrics(ctrl::MetricsRegistry& registry, const ctrl::ObjectStore& store) {
  registry.set_collector("appservice_conditions",
                         "Number of cached AppServices by status of their Available and Degraded "
                         "conditions.",
                         ctrl::MetricType::gauge,
                         [&store] { return condition_samples(store.list()); });
}

}  // namespace appservice
