// SPDX-License-Identifier: Apache-2.0
#include "appservice/cache_projection.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "appservice/conditions.h"
#include "appservice/spec_parser.h"
#include "appservice_test_support.h"
#include "ctrl/object/compact_object.h"
#include "support/heap_in_use.h"

using namespace appservice;
using appservice::testing::parse_json;
using appservice::testing::to_json;

namespace {

// A Deployment as a watch delivers it: server defaults, managedFields whole, status with times.
const char* kDeployment =
    R"({"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web","namespace":"demo",
"uid":"3f0c1b9e-8a55-4c0e-9a1e-6d2f4b7c9d10","resourceVersion":"123456","generation":2,
"creationTimestamp":"2026-12-02T10:10:26Z","labels":{"app.example.com/appservice":"web",
"app.kubernetes.io/managed-by":"appservice-operator","team":"a"},"annotations":{
"app.example.com/spec-hash":"0123456789abcdef","deployment.kubernetes.io/revision":"1",
"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\"}"},
"ownerReferences":[{"apiVersion":"app.example.com/v1","kind":"AppService","name":"web",
"uid":"7d1e3a4b","controller":true,"blockOwnerDeletion":true}],"finalizers":["x/y"],
"managedFields":[{"manager":"appservice-operator","operation":"Apply","apiVersion":"apps/v1",
"time":"2026-12-02T10:10:26Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}},
{"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1",
"time":"2026-12-02T10:10:28Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{}},
"subresource":"status"}]},
"spec":{"replicas":2,"selector":{"matchLabels":{"app.example.com/appservice":"web"}},
"template":{"metadata":{"creationTimestamp":null,"labels":{"app.example.com/appservice":"web"}},
"spec":{"containers":[{"name":"app","image":"nginx:1.27","ports":[{"containerPort":80,
"protocol":"TCP"}],"env":[{"name":"A","value":"1"}],"resources":{"limits":{"cpu":"500m"}},
"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
"imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,
"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}},
"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},
"revisionHistoryLimit":10,"progressDeadlineSeconds":600},"status":{"observedGeneration":2,
"replicas":2,"updatedReplicas":2,"readyReplicas":1,"availableReplicas":1,"unavailableReplicas":1,
"conditions":[{"type":"Available","status":"False","lastUpdateTime":"2026-12-02T10:10:28Z",
"lastTransitionTime":"2026-12-02T10:10:28Z","reason":"MinimumReplicasUnavailable","message":
"Deployment does not have minimum availability."},{"type":"Progressing","status":"True",
"lastUpdateTime":"2026-12-02T10:10:28Z","lastTransitionTime":"2026-12-02T10:10:26Z","reason":
"ReplicaSetUpdated","message":"ReplicaSet \"web-5d8f7b9c6d\" is progressing."}]}})";

const char* kProjectedDeployment =
    R"({"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web","namespace":"demo",)"
    R"("uid":"3f0c1b9e-8a55-4c0e-9a1e-6d2f4b7c9d10","resourceVersion":"123456","generation":2,)"
    R"("labels":{"app.example.com/appservice":"web","app.kubernetes.io/managed-by":)"
    R"("appservice-operator","team":"a"},"annotations":{"app.example.com/spec-hash":)"
    R"("0123456789abcdef"},"ownerReferences":[{"apiVersion":"app.example.com/v1","kind":)"
    R"("AppService","name":"web","uid":"7d1e3a4b","controller":true,"blockOwnerDeletion":true}],)"
    R"("finalizers":["x/y"],"managedFields":[{"manager":"appservice-operator","operation":)"
    R"("Apply"},{"manager":"kube-controller-manager","operation":"Update","subresource":)"
    R"("status"}]},"spec":{"replicas":2,"selector":{"matchLabels":{"app.example.com/appservice":)"
    R"("web"}},"template":{"metadata":{"labels":{"app.example.com/appservice":"web"}},"spec":)"
    R"({"containers":[{"name":"app","image":"nginx:1.27","ports":[{"containerPort":80,)"
    R"("protocol":"TCP"}],"env":[{"name":"A","value":"1"}],"resources":{"limits":{"cpu":)"
    R"("500m"}}}]}}},"status":{"observedGeneration":2,"replicas":2,"updatedReplicas":2,)"
    R"("readyReplicas":1,"availableReplicas":1,"conditions":[{"type":"Available","status":)"
    R"("False","reason":"MinimumReplicasUnavailable","message":)"
    R"("Deployment does not have minimum availability."},{"type":"Progressing","status":"True",)"
    R"("reason":"ReplicaSetUpdated","message":"ReplicaSet \"web-5d8f7b9c6d\" is progressing."}]}})";

const char* kService =
    R"({"kind":"Service","apiVersion":"v1","metadata":{"name":"web","namespace":"demo",
"uid":"s-uid","resourceVersion":"7","creationTimestamp":"2026-12-02T10:10:26Z","labels":{"a":"b"},
"annotations":{"app.example.com/spec-hash":"feed"},"ownerReferences":[{"uid":"7d1e3a4b"}],
"managedFields":[{"manager":"appservice-operator","operation":"Apply","fieldsV1":{}}]},
"spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":8080,"nodePort":31234}],
"selector":{"app.example.com/appservice":"web"},"clusterIP":"10.0.0.12","clusterIPs":
["10.0.0.12"],"type":"NodePort","sessionAffinity":"None","externalTrafficPolicy":"Cluster",
"ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","internalTrafficPolicy":"Cluster"},
"status":{"loadBalancer":{}}})";

const char* kProjectedService =
    R"({"kind":"Service","apiVersion":"v1","metadata":{"name":"web","namespace":"demo",)"
    R"("uid":"s-uid","resourceVersion":"7","labels":{"a":"b"},"annotations":)"
    R"({"app.example.com/spec-hash":"feed"},"ownerReferences":[{"uid":"7d1e3a4b"}],)"
    R"("managedFields":[{"manager":"appservice-operator","operation":"Apply"}]},"spec":)"
    R"({"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":8080,"nodePort":31234}],)"
    R"("selector":{"app.example.com/appservice":"web"},"type":"NodePort"}})";

std::size_t cached_bytes(const rapidjson::Value& object) {
  constexpr int kCopies = 100;
  std::vector<std::shared_ptr<rapidjson::Document>> cache;
  cache.reserve(kCopies);
  const std::size_t before = heap_in_use();
  for (int i = 0; i < kCopies; ++i) cache.push_back(ctrl::compact_object(object));
  return (heap_in_use() - before) / kCopies;
}

}  // namespace

TEST_CASE("projection: a cached Deployment keeps exactly what the operator reads", "[appservice]") {
  rapidjson::Document d = parse_json(kDeployment);
  project_deployment(d);
  CHECK(to_json(d) == kProjectedDeployment);
}

TEST_CASE("projection: a cached Service keeps exactly what the operator reads", "[appservice]") {
  rapidjson::Document s = parse_json(kService);
  project_service(s);
  CHECK(to_json(s) == kProjectedService);
}

TEST_CASE("projection: the status computed from a cached Deployment is the one from the whole",
          "[appservice]") {
  auto parsed = parse_app_service(parse_json(R"({"metadata":{"name":"web","namespace":"demo",
      "uid":"7d1e3a4b"},"spec":{"image":"nginx:1.27","size":2,"ports":[{"port":80}]}})"));
  REQUIRE(parsed.valid());
  const rapidjson::Document whole = parse_json(kDeployment);
  rapidjson::Document cached = parse_json(kDeployment);
  project_deployment(cached);
  const rapidjson::Document service = parse_json(kService);
  StatusInputs from_whole(parsed.app, "2026-12-02T10:11:00Z");
  from_whole.deployment = &whole;
  from_whole.service = &service;
  StatusInputs from_cached = from_whole;
  from_cached.deployment = &cached;
  const auto a = status_to_json(compute_status(from_whole));
  const auto b = status_to_json(compute_status(from_cached));
  CHECK(to_json(a) == to_json(b));
  CHECK(to_json(a).find("ReplicaSetUpdated") == std::string::npos);  // a real rollout state
  CHECK(to_json(a).find("RollingOut") != std::string::npos);
}

TEST_CASE("projection: a cached AppService loses only managedFields and kubectl's copy",
          "[appservice]") {
  rapidjson::Document app = parse_json(R"({"metadata":{"name":"web","annotations":{
      "kubectl.kubernetes.io/last-applied-configuration":"{}","note":"kept"},
      "managedFields":[{"manager":"kubectl"}]},"spec":{"image":"x"},"status":{"conditions":[]}})");
  project_app_service(app);
  CHECK(to_json(app) ==
        R"({"metadata":{"name":"web","annotations":{"note":"kept"}},"spec":{"image":"x"},)"
        R"("status":{"conditions":[]}})");
  rapidjson::Document only_kubectl = parse_json(
      R"({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}}})");
  project_app_service(only_kubectl);
  CHECK(to_json(only_kubectl) == R"({"metadata":{}})");
}

TEST_CASE("projection: a cached Deployment costs well under the whole one", "[appservice]") {
  const rapidjson::Document whole = parse_json(kDeployment);
  rapidjson::Document cached = parse_json(kDeployment);
  project_deployment(cached);
  const std::size_t whole_bytes = cached_bytes(whole);
  const std::size_t cached_size = cached_bytes(cached);
  INFO("bytes per cached Deployment: whole " << whole_bytes << ", projected " << cached_size);
  // Measured: 5,064 bytes whole, 3,207 projected; the rest is the DOM of the fields kept.
  CHECK(cached_size * 10 < whole_bytes * 7);
}
