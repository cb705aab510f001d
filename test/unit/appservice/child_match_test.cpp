// SPDX-License-Identifier: Apache-2.0
#include "appservice/child_match.h"

#include <catch2/catch.hpp>

#include "appservice/cache_projection.h"
#include "appservice/desired_state.h"
#include "appservice/spec_parser.h"
#include "appservice_test_support.h"

using namespace appservice;
using appservice::testing::load_sample;
using appservice::testing::parse_json;

namespace {

using rapidjson::Document;
using rapidjson::Value;

AppService sample(const std::string& file) {
  auto parsed = parse_app_service(load_sample(file));
  REQUIRE(parsed.valid());
  return parsed.app;
}

Document copy(const Value& v) {
  Document d;
  d.CopyFrom(v, d.GetAllocator());
  return d;
}

// Sets object[key] to a deep copy of value, in doc's allocator (values from parse_json live in a
// temporary document).
void set(Value& object, const char* key, const Value& value, Document& doc) {
  Value v(value, doc.GetAllocator());
  if (object.HasMember(key)) {
    object[key] = v;
  } else {
    object.AddMember(Value(key, doc.GetAllocator()), v, doc.GetAllocator());
  }
}

// What the API server returns for an applied Deployment: defaults, canonical quantities,
// metadata and status added.
Document server_deployment(const Document& desired) {
  Document d = copy(desired);
  auto& a = d.GetAllocator();
  auto& meta = d["metadata"];
  set(meta, "uid", Value("d-uid", a), d);
  set(meta, "resourceVersion", Value("100", a), d);
  set(meta, "generation", Value(1), d);
  meta["annotations"].AddMember("deployment.kubernetes.io/revision", "1", a);
  auto& spec = d["spec"];
  set(spec, "revisionHistoryLimit", Value(10), d);
  set(spec, "progressDeadlineSeconds", Value(600), d);
  set(spec, "strategy", parse_json(R"({"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%",
      "maxUnavailable":"25%"}})"),
      d);
  auto& pod = spec["template"]["spec"];
  set(pod, "restartPolicy", Value("Always"), d);
  set(pod, "dnsPolicy", Value("ClusterFirst"), d);
  auto& c = pod["containers"][0];
  set(c, "imagePullPolicy", Value("IfNotPresent"), d);
  set(c, "terminationMessagePath", Value("/dev/termination-log"), d);
  if (c.HasMember("resources")) {
    // "0.5" is stored as "500m", "1024Mi" as "1Gi".
    auto& limits = c["resources"]["limits"];
    for (auto& m : limits.GetObject()) {
      std::string v = m.value.GetString();
      if (v == "0.5") m.value.SetString("500m", a);
      if (v == "1024Mi") m.value.SetString("1Gi", a);
    }
  }
  if (c.HasMember("env")) {
    for (auto& e : c["env"].GetArray()) {
      if (e.HasMember("valueFrom") && e["valueFrom"].HasMember("fieldRef")) {
        set(e["valueFrom"]["fieldRef"], "apiVersion", Value("v1"), d);
      }
    }
  }
  // Another manager's env var and a status.
  if (!c.HasMember("env")) c.AddMember("env", Value(rapidjson::kArrayType), a);
  c["env"].PushBack(Value(parse_json(R"({"name":"INJECTED","value":"by-webhook"})"), a), a);
  d.AddMember("status", Value(parse_json(R"({"replicas":3,"readyReplicas":1})"), a), a);
  return d;
}

Document server_service(const Document& desired) {
  Document d = copy(desired);
  auto& spec = d["spec"];
  set(spec, "clusterIP", Value("10.0.0.12"), d);
  set(spec, "clusterIPs", parse_json(R"(["10.0.0.12"])"), d);
  set(spec, "sessionAffinity", Value("None"), d);
  set(spec, "ipFamilies", parse_json(R"(["IPv4"])"), d);
  set(spec, "internalTrafficPolicy", Value("Cluster"), d);
  for (auto& p : spec["ports"].GetArray()) {
    if (!p.HasMember("nodePort")) set(p, "nodePort", Value(31234), d);  // allocated
  }
  return d;
}

AppService with_quantities() {
  auto parsed = parse_app_service(parse_json(R"({"metadata":{"name":"q","namespace":"n"},
      "spec":{"image":"a","resources":{"limits":{"cpu":"0.5","memory":"1024Mi"}},
      "envs":[{"name":"P","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]}})"));
  REQUIRE(parsed.valid());
  return parsed.app;
}

// The live child whole (as a GET returns it) or as the children's caches keep it: the projection
// must keep every field a comparison reads.
Document as_seen(const Document& live, bool cached) {
  Document d = copy(live);
  if (cached && d.HasMember("kind") && std::string(d["kind"].GetString()) == "Deployment") {
    project_deployment(d);
  } else if (cached) {
    project_service(d);
  }
  return d;
}

}  // namespace

TEST_CASE("match: a server-defaulted copy matches, so steady state writes nothing",
          "[appservice]") {
  const bool cached = GENERATE(false, true);
  for (const AppService& app :
       {sample("clusterip-env.yaml"), sample("nginx-app.yaml"), sample("loadbalancer.yaml"),
        sample("scaled-to-zero.yaml"), with_quantities()}) {
    Document desired = desired_deployment(app);
    CHECK(deployment_matches(desired, as_seen(server_deployment(desired), cached)));
    if (!needs_service(app)) continue;
    Document service = desired_service(app);
    CHECK(service_matches(service, as_seen(server_service(service), cached)));
  }
}

TEST_CASE("match: hand edits of the Deployment are drift", "[appservice]") {
  const bool cached = GENERATE(false, true);
  Document desired = desired_deployment(sample("clusterip-env.yaml"));
  Document actual = server_deployment(desired);
  REQUIRE(deployment_matches(desired, actual));
  auto& c = actual["spec"]["template"]["spec"]["containers"][0];

  SECTION("replicas") {
    actual["spec"]["replicas"] = 1;
  }
  SECTION("image") {
    c["image"] = "nginx:latest";
  }
  SECTION("container port") {
    c["ports"][0]["containerPort"] = 9999;
  }
  SECTION("env value") {
    c["env"][0]["value"] = "changed";
  }
  SECTION("env removed") {
    c["env"].Erase(c["env"].Begin());
  }
  SECTION("resources") {
    c["resources"]["limits"]["cpu"] = "2";
  }
  SECTION("label removed") {
    actual["metadata"]["labels"].RemoveMember("app.kubernetes.io/name");
  }
  SECTION("ownerReference replaced") {
    actual["metadata"]["ownerReferences"][0]["uid"] = "other";
  }
  SECTION("spec hash from an older spec") {
    actual["metadata"]["annotations"][kSpecHashAnnotation.data()] = "0000000000000000";
  }
  SECTION("a key added to the selector, an atomic LabelSelector") {
    actual["spec"]["selector"]["matchLabels"].AddMember("tier", "x", actual.GetAllocator());
  }
  CHECK_FALSE(deployment_matches(desired, as_seen(actual, cached)));
}

TEST_CASE("match: what other managers add to granular maps and keyed lists is not drift",
          "[appservice]") {
  const bool cached = GENERATE(false, true);
  Document desired = desired_deployment(sample("clusterip-env.yaml"));
  Document actual = server_deployment(desired);
  auto& a = actual.GetAllocator();
  auto& c = actual["spec"]["template"]["spec"]["containers"][0];
  SECTION("a label") {
    actual["metadata"]["labels"].AddMember("team", "web", a);
  }
  SECTION("a template label") {
    actual["spec"]["template"]["metadata"]["labels"].AddMember("team", "web", a);
  }
  SECTION("an env var") {
    Value extra(rapidjson::kObjectType);
    extra.AddMember("name", "EXTRA", a);
    extra.AddMember("value", "1", a);
    c["env"].PushBack(extra, a);
  }
  CHECK(deployment_matches(desired, as_seen(actual, cached)));
}

TEST_CASE("match: hand edits of the Service are drift", "[appservice]") {
  const bool cached = GENERATE(false, true);
  Document desired = desired_service(sample("nginx-app.yaml"));
  Document actual = server_service(desired);
  REQUIRE(service_matches(desired, actual));
  SECTION("type") {
    actual["spec"]["type"] = "ClusterIP";
  }
  SECTION("port") {
    actual["spec"]["ports"][0]["port"] = 8080;
  }
  SECTION("targetPort") {
    actual["spec"]["ports"][0]["targetPort"] = 81;
  }
  SECTION("nodePort") {
    actual["spec"]["ports"][0]["nodePort"] = 30003;
  }
  SECTION("selector") {
    actual["spec"]["selector"]["app.example.com/appservice"] = "other";
  }
  SECTION("a key added to the selector, an atomic map") {
    actual["spec"]["selector"].AddMember("tier", "x", actual.GetAllocator());
  }
  SECTION("no spec at all") {
    actual.RemoveMember("spec");
  }
  CHECK_FALSE(service_matches(desired, as_seen(actual, cached)));
}

TEST_CASE("match: a spec change is seen against the old child", "[appservice]") {
  const bool cached = GENERATE(false, true);
  AppService app = sample("clusterip-env.yaml");
  Document old_child = server_deployment(desired_deployment(app));
  app.spec.envs.pop_back();  // removing a field: subset comparison alone could not see it
  CHECK_FALSE(deployment_matches(desired_deployment(app), as_seen(old_child, cached)));
}

TEST_CASE("match: child_difference names the first field that differs, never a value",
          "[appservice]") {
  Document desired = desired_deployment(sample("clusterip-env.yaml"));
  Document actual = server_deployment(desired);
  CHECK(child_difference(desired, actual).empty());
  actual["spec"]["replicas"] = 7;
  CHECK(child_difference(desired, actual) == "spec.replicas");
  actual = server_deployment(desired);
  actual["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:latest";
  CHECK(child_difference(desired, actual) == "spec.template.spec.containers[0].image");
  actual = server_deployment(desired);
  actual["metadata"].RemoveMember("labels");
  CHECK(child_difference(desired, actual) == "metadata.labels (absent)");
  actual = server_deployment(desired);
  auto& env = actual["spec"]["template"]["spec"]["containers"][0]["env"];
  REQUIRE(env.Size() >= 2);
  env[0]["value"] = "secret-looking value";
  const std::string where = child_difference(desired, actual);
  CHECK(where.rfind("spec.template.spec.containers[0].env[0]", 0) == 0);
  CHECK(where.find("secret") == std::string::npos);
}
