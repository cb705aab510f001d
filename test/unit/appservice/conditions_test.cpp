// SPDX-License-Identifier: Apache-2.0
#include "appservice/conditions.h"

#include <catch2/catch.hpp>

#include "appservice_test_support.h"

using namespace appservice;
using appservice::testing::parse_json;
using appservice::testing::to_json;

namespace {

AppService app_with_size(int size) {
  AppService app;
  app.name = "web";
  app.namespace_ = "ns";
  app.generation = 4;
  app.spec.size = size;
  app.spec.image = "nginx";
  app.spec.ports.push_back(ServicePort{});
  app.spec.ports.back().port = 80;
  return app;
}

rapidjson::Document deployment(int replicas, int ready, int available, int updated,
                               const char* available_status) {
  return parse_json(R"({"metadata":{"name":"web","generation":7},"status":{
      "observedGeneration":7,"replicas":)" +
                    std::to_string(replicas) + R"(,"readyReplicas":)" + std::to_string(ready) +
                    R"(,"availableReplicas":)" + std::to_string(available) +
                    R"(,"updatedReplicas":)" + std::to_string(updated) +
                    R"(,"conditions":[{"type":"Available","status":")" + available_status +
                    R"(","reason":"x"},{"type":"Progressing","status":"True",
                    "reason":"NewReplicaSetAvailable"}]}})");
}

const rapidjson::Document kService = parse_json(R"({"metadata":{"name":"web"}})");

const Condition& condition(const AppServiceStatus& s, std::string_view type) {
  const Condition* c = s.find_condition(type);
  REQUIRE(c);
  return *c;
}

}  // namespace

TEST_CASE("conditions: a converged AppService is Available and not Progressing", "[appservice]") {
  AppService app = app_with_size(2);
  auto dep = deployment(2, 2, 2, 2, "True");
  StatusInputs in(app, "2024-05-01T10:00:00Z");
  in.deployment = &dep;
  in.service = &kService;
  AppServiceStatus s = compute_status(in);
  CHECK(s.observed_generation == 4);
  CHECK(s.replicas == 2);
  CHECK(s.ready_replicas == 2);
  CHECK(s.available_replicas == 2);
  CHECK(s.selector == "app.example.com/appservice=web");
  CHECK(condition(s, kAvailable).status == "True");
  CHECK(condition(s, kAvailable).reason == "MinimumReplicasAvailable");
  CHECK(condition(s, kAvailable).message == "2 of 2 replicas available");
  CHECK(condition(s, kAvailable).observed_generation == 4);
  CHECK(condition(s, kProgressing).status == "False");
  CHECK(condition(s, kProgressing).reason == "RolloutComplete");
  CHECK(condition(s, kDegraded).status == "False");
  CHECK(condition(s, kDegraded).reason == "AsExpected");
}

TEST_CASE("conditions: missing children, rollouts and scale to zero", "[appservice]") {
  AppService app = app_with_size(3);
  StatusInputs in(app, "2024-05-01T10:00:00Z");
  AppServiceStatus s = compute_status(in);
  CHECK(condition(s, kAvailable).reason == "DeploymentNotFound");
  CHECK(condition(s, kProgressing).status == "True");
  CHECK(s.replicas == 0);

  auto rolling = deployment(3, 1, 1, 1, "False");
  in.deployment = &rolling;
  s = compute_status(in);
  CHECK(condition(s, kAvailable).reason == "ServiceNotFound");
  in.service = &kService;
  s = compute_status(in);
  CHECK(condition(s, kAvailable).status == "False");
  CHECK(condition(s, kAvailable).reason == "DeploymentUnavailable");
  CHECK(condition(s, kAvailable).message == "1 of 3 replicas available");
  CHECK(condition(s, kProgressing).status == "True");
  CHECK(condition(s, kProgressing).reason == "RollingOut");

  // The Deployment says Available (maxUnavailable allows it) but fewer than size are up.
  auto short_of = deployment(3, 2, 2, 3, "True");
  in.deployment = &short_of;
  CHECK(condition(compute_status(in), kAvailable).status == "False");

  auto stalled = parse_json(R"({"metadata":{"generation":1},"status":{"conditions":[
      {"type":"Progressing","status":"False","reason":"ProgressDeadlineExceeded",
       "message":"ReplicaSet web-1 has timed out progressing."}]}})");
  in.deployment = &stalled;
  s = compute_status(in);
  CHECK(condition(s, kProgressing).reason == "ProgressDeadlineExceeded");
  CHECK(condition(s, kProgressing).message == "ReplicaSet web-1 has timed out progressing.");

  AppService idle = app_with_size(0);
  auto empty = deployment(0, 0, 0, 0, "True");
  StatusInputs zero(idle, "2024-05-01T10:00:00Z");
  zero.deployment = &empty;
  zero.service = &kService;
  s = compute_status(zero);
  CHECK(condition(s, kAvailable).status == "True");
  CHECK(condition(s, kAvailable).reason == "ScaledToZero");
  CHECK(condition(s, kProgressing).reason == "RolloutComplete");
}

TEST_CASE("conditions: Degraded carries the reconcile issue", "[appservice]") {
  AppService app = app_with_size(1);
  StatusInputs in(app, "2024-05-01T10:00:00Z");
  struct Case {
    ReconcileIssue issue;
    const char* reason;
  };
  for (Case c : {Case{ReconcileIssue::invalid_spec, "InvalidSpec"},
                 Case{ReconcileIssue::ownership_conflict, "OwnershipConflict"},
                 Case{ReconcileIssue::reconcile_error, "ReconcileError"}}) {
    in.issue = c.issue;
    in.issue_message = "what went wrong";
    AppServiceStatus s = compute_status(in);
    CHECK(condition(s, kDegraded).status == "True");
    CHECK(condition(s, kDegraded).reason == c.reason);
    CHECK(condition(s, kDegraded).message == "what went wrong");
  }
}

TEST_CASE("conditions: lastTransitionTime moves only when the status flips", "[appservice]") {
  AppService app = app_with_size(2);
  auto unavailable = deployment(2, 0, 0, 2, "False");
  auto ready = deployment(2, 2, 2, 2, "True");
  StatusInputs in(app, "2024-05-01T10:00:00Z");
  in.service = &kService;
  in.deployment = &unavailable;
  AppServiceStatus first = compute_status(in);
  CHECK(condition(first, kAvailable).last_transition_time == "2024-05-01T10:00:00Z");

  // Same status later: times kept, and the JSON is equal, so no status write.
  in.previous = first.conditions;
  in.now = "2024-05-01T10:05:00Z";
  AppServiceStatus again = compute_status(in);
  CHECK(condition(again, kAvailable).last_transition_time == "2024-05-01T10:00:00Z");
  CHECK(status_equal(status_to_json(first), status_to_json(again)));

  // Available flips to True: its time moves; Degraded stays False and keeps its time.
  in.deployment = &ready;
  in.now = "2024-05-01T10:07:00Z";
  AppServiceStatus flipped = compute_status(in);
  CHECK(condition(flipped, kAvailable).status == "True");
  CHECK(condition(flipped, kAvailable).last_transition_time == "2024-05-01T10:07:00Z");
  CHECK(condition(flipped, kDegraded).last_transition_time == "2024-05-01T10:00:00Z");
  CHECK(condition(flipped, kProgressing).last_transition_time == "2024-05-01T10:07:00Z");
  CHECK_FALSE(status_equal(status_to_json(again), status_to_json(flipped)));
}

TEST_CASE("conditions: previous conditions are read back from the object", "[appservice]") {
  AppService app = app_with_size(1);
  StatusInputs in(app, "2024-05-01T10:00:00Z");
  auto status = status_to_json(compute_status(in));
  rapidjson::Document object = parse_json(R"({"metadata":{"name":"web"}})");
  rapidjson::Value copy(status, object.GetAllocator());
  object.AddMember("status", copy, object.GetAllocator());
  auto previous = parse_conditions(object);
  REQUIRE(previous.size() == 3);
  CHECK(previous[0].type == "Available");
  CHECK(previous[0].last_transition_time == "2024-05-01T10:00:00Z");
  CHECK(previous[2].reason == "AsExpected");
  CHECK(parse_conditions(parse_json(R"({"status":{"conditions":[{"status":"True"},7]}})")).empty());
}

TEST_CASE("conditions: status_equal ignores order and absent zero counts", "[appservice]") {
  auto a = parse_json(R"({"observedGeneration":1,"replicas":0,"selector":"s","conditions":[
      {"type":"A","status":"True"},{"type":"B","status":"False"}]})");
  auto b = parse_json(R"({"selector":"s","observedGeneration":1,"conditions":[
      {"status":"False","type":"B"},{"type":"A","status":"True"}]})");
  CHECK(status_equal(a, b));
  CHECK(status_equal(b, a));
  auto c = parse_json(R"({"selector":"s","observedGeneration":2,"conditions":[
      {"type":"B","status":"False"},{"type":"A","status":"True"}]})");
  CHECK_FALSE(status_equal(a, c));
  auto d = parse_json(R"({"observedGeneration":1,"selector":"s","conditions":[
      {"type":"A","status":"True"}]})");
  CHECK_FALSE(status_equal(a, d));
  CHECK_FALSE(status_equal(a, parse_json(R"({"observedGeneration":1,"replicas":1,"selector":"s",
      "conditions":[{"type":"A","status":"True"},{"type":"B","status":"False"}]})")));
  INFO(to_json(a));
}

TEST_CASE("conditions: status_difference says what a status write changes", "[appservice]") {
  auto a = parse_json(R"({"observedGeneration":1,"replicas":0,"selector":"s","conditions":[
      {"type":"Progressing","status":"True","reason":"RollingOut","message":"0 of 1"},
      {"type":"Available","status":"True","reason":"ScaledToZero","message":"m"}]})");
  auto b = parse_json(R"({"observedGeneration":1,"replicas":0,"selector":"s","conditions":[
      {"type":"Available","status":"True","reason":"ScaledToZero","message":"m"},
      {"type":"Progressing","status":"True","reason":"RolloutComplete","message":"done"}]})");
  CHECK(status_difference(a, b) ==
        R"(conditions[Progressing].reason "RollingOut" -> "RolloutComplete")");
  CHECK(status_difference(a, a).empty());
  auto c = parse_json(R"({"observedGeneration":1,"replicas":1,"selector":"s","conditions":[
      {"type":"Progressing","status":"True","reason":"RollingOut","message":"0 of 1"},
      {"type":"Available","status":"True","reason":"ScaledToZero","message":"m"}]})");
  CHECK(status_difference(a, c) == "replicas 0 -> 1");
  auto d = parse_json(R"({"observedGeneration":1,"selector":"s","conditions":[
      {"type":"Progressing","status":"True","reason":"RollingOut","message":"1 of 1"},
      {"type":"Available","status":"True","reason":"ScaledToZero","message":"m"}]})");
  CHECK(status_difference(a, d) == "conditions[Progressing].message");  // never its text
  CHECK(status_difference(parse_json("{}"), a) == "observedGeneration (none) -> 1");
}
