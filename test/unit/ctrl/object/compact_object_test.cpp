// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/compact_object.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "support/heap_in_use.h"

using ctrl::compact_object;

namespace {

// A Deployment as the API server sends it (managedFields already dropped).
const char* kDeployment =
    R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app-00001",
"namespace":"bench","uid":"3f0c1b9e-8a55-4c0e-9a1e-6d2f4b7c9d10","resourceVersion":"123456",
"generation":1,"creationTimestamp":"2026-12-02T10:10:26Z","labels":{"app.example.com/appservice":
"app-00001","app.kubernetes.io/instance":"app-00001","app.kubernetes.io/managed-by":
"appservice-operator","app.kubernetes.io/name":"app-00001"},"annotations":{
"app.example.com/spec-hash":"0123456789abcdef","deployment.kubernetes.io/revision":"1"},
"ownerReferences":[{"apiVersion":"app.example.com/v1","kind":"AppService","name":"app-00001",
"uid":"7d1e3a4b-2c5f-4e6a-8b9c-0d1e2f3a4b5c","controller":true,"blockOwnerDeletion":true}]},
"spec":{"replicas":1,"selector":{"matchLabels":{"app.example.com/appservice":"app-00001"}},
"template":{"metadata":{"labels":{"app.example.com/appservice":"app-00001"}},"spec":{"containers":
[{"name":"app","image":"nginx:1.27","ports":[{"containerPort":80,"protocol":"TCP"}],
"resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
"imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,
"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}},
"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},
"revisionHistoryLimit":10,"progressDeadlineSeconds":600},"status":{"observedGeneration":1,
"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,"conditions":[{"type":
"Available","status":"True","lastUpdateTime":"2026-12-02T10:10:28Z","lastTransitionTime":
"2026-12-02T10:10:28Z","reason":"MinimumReplicasAvailable","message":
"Deployment has minimum availability."},{"type":"Progressing","status":"True","lastUpdateTime":
"2026-12-02T10:10:28Z","lastTransitionTime":"2026-12-02T10:10:26Z","reason":
"NewReplicaSetAvailable","message":"ReplicaSet \"app-00001-5d8f7b9c6d\" has successfully progressed."}]}})";

}  // namespace

TEST_CASE("compact_object: an equal copy that outlives its source", "[compact]") {
  std::shared_ptr<rapidjson::Document> copy;
  {
    rapidjson::Document source;
    source.Parse(kDeployment);
    REQUIRE_FALSE(source.HasParseError());
    copy = compact_object(source);
    CHECK(*copy == source);
  }
  CHECK(std::string((*copy)["metadata"]["name"].GetString()) == "app-00001");
  CHECK((*copy)["status"]["conditions"].Size() == 2);
}

TEST_CASE("compact_object: a cached Deployment costs about its JSON text, not a pool chunk",
          "[compact]") {
  rapidjson::Document source;
  source.Parse(kDeployment);
  REQUIRE_FALSE(source.HasParseError());
  const std::size_t text = std::string(kDeployment).size();
  constexpr int kCopies = 200;
  std::vector<std::shared_ptr<rapidjson::Document>> cache;
  cache.reserve(kCopies);
  const std::size_t before = heap_in_use();
  for (int i = 0; i < kCopies; ++i) cache.push_back(compact_object(source));
  const std::size_t per_object = (heap_in_use() - before) / kCopies;
  INFO("bytes per cached object: " << per_object << ", JSON text: " << text);
  // A default Document copy takes a 64 KiB pool chunk; the DOM itself is about twice the text.
  CHECK(per_object < 3 * text);
}
