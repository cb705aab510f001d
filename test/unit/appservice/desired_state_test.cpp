// SPDX-License-Identifier: Apache-2.0
#include "appservice/desired_state.h"

#include <catch2/catch.hpp>

#include "appservice/spec_parser.h"
#include "appservice_test_support.h"

using namespace appservice;
using appservice::testing::load_json;
using appservice::testing::load_sample;
using appservice::testing::parse_json;
using appservice::testing::to_json;

namespace {

AppService sample(const std::string& file) {
  auto parsed = parse_app_service(load_sample(file));
  INFO(parsed.problems_message());
  REQUIRE(parsed.valid());
  return parsed.app;
}

AppService from_spec(const std::string& spec) {
  auto parsed = parse_app_service(
      parse_json(R"({"metadata":{"name":"x","namespace":"n","uid":"u"},"spec":)" + spec + "}"));
  INFO(parsed.problems_message());
  REQUIRE(parsed.valid());
  return parsed.app;
}

}  // namespace

// Goldens are compared as parsed JSON (key order and layout do not matter).
TEST_CASE("desired: golden Deployment and Service for the samples", "[appservice]") {
  for (std::string name : {"nginx-app", "web-clusterip"}) {
    std::string file = name == "nginx-app" ? "nginx-app.yaml" : "clusterip-env.yaml";
    AppService app = sample(file);
    auto deployment = desired_deployment(app);
    auto service = desired_service(app);
    auto want_deployment = load_json("test/unit/appservice/golden/" + name + ".deployment.json");
    auto want_service = load_json("test/unit/appservice/golden/" + name + ".service.json");
    INFO(name << " deployment: " << to_json(deployment));
    CHECK(deployment == want_deployment);
    INFO(name << " service: " << to_json(service));
    CHECK(service == want_service);
  }
}

TEST_CASE("desired: building twice gives the same body (re-apply is a no-op)", "[appservice]") {
  AppService app = sample("clusterip-env.yaml");
  CHECK(desired_deployment(app) == desired_deployment(app));
  CHECK(desired_service(app) == desired_service(app));
}

TEST_CASE("desired: the spec hash changes when a field is removed, not otherwise", "[appservice]") {
  AppService app = from_spec(R"({"image":"a","envs":[{"name":"A","value":"1"},{"name":"B"}]})");
  auto hash = [](const rapidjson::Document& d) {
    return std::string(d["metadata"]["annotations"][kSpecHashAnnotation.data()].GetString());
  };
  std::string before = hash(desired_deployment(app));
  CHECK(before.size() == 16);
  CHECK(hash(desired_deployment(app)) == before);
  app.spec.envs.pop_back();
  CHECK(hash(desired_deployment(app)) != before);
}

TEST_CASE("desired: container ports follow targetPorts", "[appservice]") {
  AppService app = from_spec(R"({"image":"a","ports":[
      {"name":"http","port":80,"targetPort":8080},
      {"name":"alt","port":81,"targetPort":8080},
      {"name":"dns","port":53,"protocol":"UDP"},
      {"name":"dns-tcp","port":53},
      {"name":"web","port":443,"targetPort":"https"},
      {"name":"web2","port":444,"targetPort":"https"}]})");
  auto d = desired_deployment(app);
  const auto& ports = d["spec"]["template"]["spec"]["containers"][0]["ports"];
  // 8080 once (two Service ports target it), 53 per protocol, "https" once with port 443.
  CHECK(ports == parse_json(R"([
      {"containerPort":8080,"protocol":"TCP"},
      {"containerPort":53,"protocol":"UDP"},
      {"containerPort":53,"protocol":"TCP"},
      {"name":"https","containerPort":443,"protocol":"TCP"}])"));

  auto s = desired_service(app);
  CHECK(s["spec"]["type"] == "ClusterIP");
  CHECK(s["spec"]["ports"][2] ==
        parse_json(R"({"name":"dns","protocol":"UDP","port":53,"targetPort":53})"));
  CHECK(s["spec"]["ports"][4]["targetPort"] == "https");
}

TEST_CASE("desired: optional fields are left out, defaults are explicit", "[appservice]") {
  AppService app = from_spec(R"({"image":"a","envs":[{"name":"EMPTY","value":""}],
      "serviceType":"LoadBalancer","ports":[{"port":80,"appProtocol":"http"}]})");
  auto d = desired_deployment(app);
  const auto& c = d["spec"]["template"]["spec"]["containers"][0];
  CHECK_FALSE(c.HasMember("resources"));
  CHECK(c["env"] == parse_json(R"([{"name":"EMPTY"}])"));  // the API server drops value: ""
  CHECK(d["spec"]["replicas"].GetInt() == 1);
  auto s = desired_service(app);
  CHECK(s["spec"]["type"] == "LoadBalancer");
  CHECK(s["spec"]["ports"][0] ==
        parse_json(R"({"protocol":"TCP","appProtocol":"http","port":80,"targetPort":80})"));

  AppService no_ports = from_spec(R"({"image":"a"})");
  CHECK_FALSE(needs_service(no_ports));
  CHECK_FALSE(
      desired_deployment(no_ports)["spec"]["template"]["spec"]["containers"][0].HasMember("ports"));
  CHECK(needs_service(app));
}

TEST_CASE("desired: label selector for status.selector", "[appservice]") {
  CHECK(label_selector(sample("nginx-app.yaml")) == "app.example.com/appservice=nginx-app");
}
