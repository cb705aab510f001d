// SPDX-License-Identifier: Apache-2.0
#include "appservice/spec_parser.h"

#include <catch2/catch.hpp>

#include "appservice_test_support.h"

using namespace appservice;
using appservice::testing::load_sample;
using appservice::testing::parse_json;

namespace {

ParsedAppService parse(const std::string& spec_json, const std::string& name = "web") {
  auto doc = parse_json(R"({"apiVersion":"app.example.com/v1","kind":"AppService",)"
                        R"("metadata":{"name":")" +
                        name + R"(","namespace":"ns","uid":"u-1","generation":5},"spec":)" +
                        spec_json + "}");
  return parse_app_service(doc);
}

bool has_problem(const ParsedAppService& p, const std::string& path) {
  for (const auto& problem : p.problems) {
    if (problem.path == path) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("parser: the opdemo sample with metadata and derived NodePort", "[appservice]") {
  auto doc = load_sample("nginx-app.yaml");
  doc["metadata"].AddMember(
      "finalizers",
      rapidjson::Value(parse_json(R"(["app.example.com/cleanup"])"), doc.GetAllocator()),
      doc.GetAllocator());
  auto parsed = parse_app_service(doc);
  INFO(parsed.problems_message());
  REQUIRE(parsed.valid());
  const AppService& app = parsed.app;
  CHECK(app.name == "nginx-app");
  CHECK(app.namespace_ == "demo");
  CHECK(app.uid == "6f1c7d1e-0000-4000-8000-000000000001");
  CHECK(app.resource_version == "42");
  CHECK(app.generation == 3);
  CHECK_FALSE(app.being_deleted);
  CHECK(app.has_finalizer("app.example.com/cleanup"));
  CHECK(app.spec.size == 2);
  CHECK(app.spec.image == "nginx:1.7.9");
  REQUIRE(app.spec.ports.size() == 1);
  CHECK(app.spec.ports[0].port == 80);
  CHECK(app.spec.ports[0].protocol == Protocol::tcp);  // defaulted like the CRD
  CHECK(std::get<std::int32_t>(*app.spec.ports[0].target_port) == 80);
  CHECK(app.spec.ports[0].node_port == 30002);
  CHECK(app.spec.service_type == ServiceType::node_port);  // derived from nodePort
}

TEST_CASE("parser: defaults like the CRD (size 1, TCP, ClusterIP)", "[appservice]") {
  auto parsed = parse(R"({"image":"nginx","ports":[{"port":8080}]})");
  REQUIRE(parsed.valid());
  CHECK(parsed.app.spec.size == 1);
  CHECK(parsed.app.spec.ports[0].protocol == Protocol::tcp);
  CHECK_FALSE(parsed.app.spec.ports[0].target_port);
  CHECK(std::get<std::int32_t>(parsed.app.spec.ports[0].effective_target_port()) == 8080);
  CHECK(parsed.app.spec.service_type == ServiceType::cluster_ip);
}

TEST_CASE("parser: the richer samples parse with every field", "[appservice]") {
  auto parsed = parse_app_service(load_sample("clusterip-env.yaml"));
  INFO(parsed.problems_message());
  REQUIRE(parsed.valid());
  const auto& s = parsed.app.spec;
  CHECK(s.size == 3);
  CHECK(s.service_type == ServiceType::cluster_ip);
  CHECK(s.resources.requests.at("cpu") == "100m");
  CHECK(s.resources.limits.at("memory") == "128Mi");
  REQUIRE(s.envs.size() == 2);
  CHECK(s.envs[0].value == "hello");
  REQUIRE(s.envs[1].value_from);
  CHECK(s.envs[1].value_from->field_ref->field_path == "metadata.name");
  CHECK(std::get<std::string>(*s.ports[1].target_port) == "metrics");

  auto lb = parse_app_service(load_sample("loadbalancer.yaml"));
  REQUIRE(lb.valid());
  CHECK(lb.app.spec.service_type == ServiceType::load_balancer);
  CHECK(lb.app.spec.ports[1].protocol == Protocol::udp);

  auto idle = parse_app_service(load_sample("scaled-to-zero.yaml"));
  REQUIRE(idle.valid());
  CHECK(idle.app.spec.size == 0);
}

TEST_CASE("parser: deletion, integer quantities and valueFrom kinds", "[appservice]") {
  auto doc = parse_json(R"({"metadata":{"name":"a","deletionTimestamp":"2024-01-01T00:00:00Z"},
    "spec":{"image":"x","resources":{"limits":{"cpu":2,"memory":"1Gi"}},
      "envs":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"s","key":"k","optional":true}}},
              {"name":"B","valueFrom":{"configMapKeyRef":{"name":"c","key":"k"}}},
              {"name":"C","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"1m"}}}]}})");
  auto parsed = parse_app_service(doc);
  INFO(parsed.problems_message());
  REQUIRE(parsed.valid());
  CHECK(parsed.app.being_deleted);
  CHECK(parsed.app.spec.resources.limits.at("cpu") == "2");
  CHECK(parsed.app.spec.envs[0].value_from->secret_key_ref->optional == true);
  CHECK(parsed.app.spec.envs[1].value_from->config_map_key_ref->key == "k");
  CHECK(parsed.app.spec.envs[2].value_from->resource_field_ref->divisor == "1m");
}

TEST_CASE("parser: problems name the field for objects that slipped past the schema",
          "[appservice]") {
  CHECK(has_problem(parse(R"({"size":1})"), "spec.image"));
  CHECK(has_problem(parse(R"({"image":""})"), "spec.image"));
  CHECK(has_problem(parse(R"({"image":"a b"})"), "spec.image"));
  CHECK(has_problem(parse(R"({"image":"x","size":-1})"), "spec.size"));
  CHECK(has_problem(parse(R"({"image":"x","size":"two"})"), "spec.size"));
  CHECK(has_problem(parse(R"({"image":"x","ports":[{"port":0}]})"), "spec.ports[0].port"));
  CHECK(has_problem(parse(R"({"image":"x","ports":[{"port":70000}]})"), "spec.ports[0].port"));
  CHECK(has_problem(parse(R"({"image":"x","ports":[{"name":"a"}]})"), "spec.ports[0].port"));
  CHECK(has_problem(parse(R"({"image":"x","ports":[{"port":1,"protocol":"HTTP"}]})"),
                    "spec.ports[0].protocol"));
  CHECK(has_problem(parse(R"({"image":"x","ports":[{"port":1,"targetPort":0}]})"),
                    "spec.ports[0].targetPort"));
  CHECK(has_problem(parse(R"({"image":"x","ports":[{"port":1,"targetPort":"Http"}]})"),
                    "spec.ports[0].targetPort"));
  CHECK(has_problem(parse(R"({"image":"x","ports":[{"port":1,"nodePort":70000}]})"),
                    "spec.ports[0].nodePort"));
  CHECK(has_problem(parse(R"({"image":"x","serviceType":"ExternalName"})"), "spec.serviceType"));
  CHECK(has_problem(
      parse(R"({"image":"x","serviceType":"ClusterIP","ports":[{"port":1,"nodePort":30001}]})"),
      "spec.serviceType"));
  CHECK(has_problem(parse(R"({"image":"x","serviceType":"LoadBalancer"})"), "spec.ports"));
  CHECK(has_problem(parse(R"({"image":"x","ports":[{"port":1},{"port":2,"name":"b"}]})"),
                    "spec.ports[0].name"));
  CHECK(has_problem(parse(R"({"image":"x","ports":[{"port":1,"name":"a"},{"port":2,"name":"a"}]})"),
                    "spec.ports[1].name"));
  CHECK(has_problem(parse(R"({"image":"x","ports":[{"port":1,"name":"a"},{"port":1,"name":"b"}]})"),
                    "spec.ports[1]"));
  // One named container port cannot serve two protocols; two names, or numbers, can.
  CHECK(has_problem(parse(R"({"image":"x","ports":[{"port":53,"name":"t","targetPort":"dns"},)"
                          R"({"port":53,"name":"u","protocol":"UDP","targetPort":"dns"}]})"),
                    "spec.ports[1].targetPort"));
  CHECK(parse(R"({"image":"x","ports":[{"port":53,"name":"t","targetPort":"dns-tcp"},)"
              R"({"port":53,"name":"u","protocol":"UDP","targetPort":"dns-udp"}]})")
            .valid());
  CHECK(has_problem(parse(R"({"image":"x","resources":{"limits":{"cpu":"lots"}}})"),
                    "spec.resources.limits.cpu"));
  CHECK(has_problem(parse(R"({"image":"x","envs":[{"name":"A"},{"name":"A"}]})"),
                    "spec.envs[1].name"));
  CHECK(has_problem(parse(R"({"image":"x","envs":[{"name":"A","value":"v",
      "valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]})"),
                    "spec.envs[0]"));
  CHECK(has_problem(parse(R"({"image":"x","envs":[{"name":"A","valueFrom":{}}]})"),
                    "spec.envs[0].valueFrom"));
  CHECK(has_problem(parse(R"({"image":"x"})", "9lives"), "metadata.name"));
  CHECK(has_problem(parse(R"("not an object")"), "spec"));
}

TEST_CASE("parser: metadata is kept for an invalid spec, so cleanup still works", "[appservice]") {
  auto parsed = parse(R"({"size":-3,"ports":"eighty"})");
  CHECK_FALSE(parsed.valid());
  CHECK(parsed.app.name == "web");
  CHECK(parsed.app.uid == "u-1");
  CHECK(parsed.app.generation == 5);
  std::string message = parsed.problems_message();
  CHECK(message.find("spec.size: must be in 0..2147483647, got -3") != std::string::npos);
  CHECK(message.find("spec.image: is required") != std::string::npos);
  CHECK(message.find("spec.ports: must be a list") != std::string::npos);
}

TEST_CASE("parser: the problems message is bounded", "[appservice]") {
  std::string envs;
  for (int i = 0; i < 200; ++i) envs += std::string(i ? "," : "") + R"({"name":"A"})";
  auto parsed = parse(R"({"image":"x","envs":[)" + envs + "]}");
  CHECK(parsed.problems.size() == 199);
  CHECK(parsed.problems_message().size() <= 1030);
  CHECK(parsed.problems_message().ends_with("; ..."));
}
