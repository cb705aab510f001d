// SPDX-License-Identifier: Apache-2.0
#include "appservice/condition_metrics.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "ctrl/metrics/metrics_registry.h"

namespace {

ctrl::ObjectPtr app_service(const std::string& conditions) {
  static int serial = 0;
  auto doc = std::make_shared<rapidjson::Document>();
  const std::string json = R"({"metadata":{"namespace":"n","name":"a)" + std::to_string(++serial) +
                           R"(","resourceVersion":"1"},)" + R"("status":{"conditions":)" +
                           conditions + "}}";
  doc->Parse(json.c_str());
  REQUIRE_FALSE(doc->HasParseError());
  return doc;
}

double sample(const ctrl::MetricsRegistry::Samples& samples, const std::string& condition,
              const std::string& status) {
  for (const auto& [labels, value] : samples) {
    if (labels.at("condition") == condition && labels.at("status") == status) return value;
  }
  FAIL("no series condition=" << condition << " status=" << status);
  return -1;
}

}  // namespace

TEST_CASE("appservice_conditions counts cached AppServices by condition status", "[metrics]") {
  ctrl::ObjectStore store;
  store.apply(ctrl::informer::Replace{{
      app_service(R"([{"type":"Available","status":"True"},{"type":"Degraded","status":"False"}])"),
      app_service(R"([{"type":"Available","status":"True"},{"type":"Degraded","status":"False"}])"),
      app_service(R"([{"type":"Available","status":"False"},{"type":"Degraded","status":"True"}])"),
      app_service("[]"),  // just created: no conditions yet
      app_service(R"([{"type":"Available","status":"Maybe"}])"),
  }});
  REQUIRE(store.size() == 5);
  const auto samples = appservice::condition_samples(store);
  CHECK(samples.size() == 6);  // every series, zeros included
  CHECK(sample(samples, "Available", "True") == 2);
  CHECK(sample(samples, "Available", "False") == 1);
  CHECK(sample(samples, "Available", "Unknown") == 2);
  CHECK(sample(samples, "Degraded", "True") == 1);
  CHECK(sample(samples, "Degraded", "False") == 2);
  CHECK(sample(samples, "Degraded", "Unknown") == 2);
}

TEST_CASE("appservice_conditions has zero series with no AppService, rendered as a gauge",
          "[metrics]") {
  ctrl::ObjectStore store;
  ctrl::MetricsRegistry registry;
  appservice::register_condition_metrics(registry, store);
  const auto text = registry.render();
  CHECK(text.find("# TYPE appservice_conditions gauge") != std::string::npos);
  CHECK(text.find("appservice_conditions{condition=\"Available\",status=\"True\"} 0") !=
        std::string::npos);
  CHECK(text.find("appservice_conditions{condition=\"Degraded\",status=\"Unknown\"} 0") !=
        std::string::npos);
}
