// SPDX-License-Identifier: Apache-2.0
// The AppService reconciler itself, one situation per row: the caches are prepared ObjectStores,
// the REST client is the real one talking over loopback to a FakeApiServer that answers from the
// row's script and records every request, and Events go through the real EventRecorder to a
// second fake server that records them. Each row states the exact requests (method, path and
// query, content type, the parts of the body that matter), the Events and the result.

#include "appservice/reconciler.h"

#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "appservice/conditions.h"
#include "appservice/desired_state.h"
#include "appservice/spec_parser.h"
#include "appservice_test_support.h"
#include "ctrl/base/clock.h"
#include "ctrl/cache/object_store.h"
#include "ctrl/client.h"
#include "ctrl/events/event.h"
#include "ctrl/events/event_recorder.h"
#include "ctrl/object/object_meta.h"
#include "ctrl/write_tracker.h"
#include "support/async_test.h"
#include "support/fake_api_server.h"

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using appservice::testing::load_sample;
using appservice::testing::parse_json;
using appservice::testing::to_json;
using kube::testing::FakeApiServer;
using Reply = FakeApiServer::Reply;
using Request = FakeApiServer::Request;
using Doc = rapidjson::Document;
using Kind = ctrl::ReconcileResult::Kind;
using namespace std::chrono_literals;

// ---- objects -------------------------------------------------------------------------------

const std::string kDeployments = "/apis/apps/v1/namespaces/demo/deployments";
const std::string kServices = "/api/v1/namespaces/demo/services";
const std::string kAppServices = "/apis/app.example.com/v1/namespaces/demo/appservices";
const std::string kCreate = "?fieldManager=appservice-operator";
const std::string kApply = "?fieldManager=appservice-operator&force=true";
const std::string kJson = "application/json";
const std::string kJsonPatch = "application/json-patch+json";
const std::string kMergePatch = "application/merge-patch+json";
const std::string kApplyPatch = "application/apply-patch+yaml";
const std::string kDeploymentUid = "dep-uid";
const std::string kServiceUid = "svc-uid";

std::string quoted(const std::string& s) {
  return to_json(rapidjson::Value(rapidjson::StringRef(s.c_str())));
}

// Sets the member at a JSON pointer ("/metadata/finalizers") to the value of some JSON text.
void set(Doc& doc, const char* pointer, const std::string& json) {
  Doc parsed = parse_json(json);
  rapidjson::Value value(parsed, doc.GetAllocator());
  rapidjson::Pointer(pointer).Set(doc, value);
}

void erase(Doc& doc, const char* pointer) {
  REQUIRE(rapidjson::Pointer(pointer).Erase(doc));
}

Doc copy(const rapidjson::Value& v) {
  Doc d;
  d.CopyFrom(v, d.GetAllocator());
  return d;
}

// A sample AppService as the cache holds it (namespace demo, resourceVersion 42, generation 3),
// with our finalizer.
Doc app_object(const std::string& sample = "nginx-app.yaml") {
  Doc doc = load_sample(sample);
  set(doc, "/metadata/finalizers", R"(["app.example.com/cleanup"])");
  return doc;
}

appservice::AppService parsed(const Doc& app) {
  return appservice::parse_app_service(app).app;
}

// managedFields as the children's cache keeps them (ctrl::summarize_managed_fields): who wrote.
const std::string kFoldedSummary = R"([{"manager":"appservice-operator","operation":"Apply"}])";
const std::string kUnfoldedSummary =
    R"([{"manager":"appservice-operator","operation":"Update"},)"
    R"({"manager":"kube-controller-manager","operation":"Update","subresource":"status"}])";
// The same entries whole, as a GET returns them.
const std::string kUnfoldedWhole =
    R"([{"manager":"appservice-operator","operation":"Update","apiVersion":"apps/v1",)"
    R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:template":{}}}},)"
    R"({"manager":"kube-controller-manager","operation":"Update","subresource":"status",)"
    R"("fieldsType":"FieldsV1","fieldsV1":{"f:status":{}}}])";

// The desired child as the API server stores it and our cache keeps it: with a uid, a
// resourceVersion, a folded managedFields summary, and for a Deployment a rolled-out status of
// spec.size replicas.
Doc stored(Doc desired, const std::string& uid, const std::string& rv) {
  set(desired, "/metadata/uid", quoted(uid));
  set(desired, "/metadata/resourceVersion", quoted(rv));
  set(desired, "/metadata/managedFields", kFoldedSummary);
  if (std::string(desired["kind"].GetString()) == "Deployment") {
    set(desired, "/metadata/generation", "1");
    const std::string n = std::to_string(desired["spec"]["replicas"].GetInt());
    set(desired, "/status",
        R"({"observedGeneration":1,"replicas":)" + n + R"(,"updatedReplicas":)" + n +
            R"(,"readyReplicas":)" + n + R"(,"availableReplicas":)" + n +
            R"(,"conditions":[{"type":"Available","status":"True"},)"
            R"({"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable"}]})");
  }
  return desired;
}

Doc live_deployment(const Doc& app, const std::string& rv = "100") {
  return stored(appservice::desired_deployment(parsed(app)), kDeploymentUid, rv);
}

Doc live_service(const Doc& app, const std::string& rv = "200") {
  return stored(appservice::desired_service(parsed(app)), kServiceUid, rv);
}

// A Deployment of that name that another controller made.
Doc foreign_deployment() {
  return parse_json(
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx-app",)"
      R"("namespace":"demo","uid":"foreign-uid","resourceVersion":"7","ownerReferences":[)"
      R"({"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","name":"web","uid":"rollout-uid",)"
      R"("controller":true}]},"spec":{"replicas":1}})");
}

const std::string kConflictMessage =
    "Deployment demo/nginx-app exists and is not controlled by this AppService (controller: "
    "Rollout/web)";

// What the cache holds: the AppService and its cached children.
struct World {
  Doc app;
  std::optional<Doc> deployment;
  std::optional<Doc> service;
};

// Gives the AppService the status a reconcile of these inputs writes, as the last reconcile
// would have left it, so a row shows only the status writes its own situation causes.
void settle_with(World& w, const std::function<void(appservice::StatusInputs&)>& inputs) {
  const auto app = parsed(w.app);
  const std::string now = ctrl::format_event_time(ctrl::FakeClock().wall_now());
  appservice::StatusInputs in(app, now);
  inputs(in);
  set(w.app, "/status", to_json(appservice::status_to_json(appservice::compute_status(in))));
}

void settle(World& w, const rapidjson::Value* deployment, const rapidjson::Value* service,
            appservice::ReconcileIssue issue = appservice::ReconcileIssue::none,
            std::string message = {}) {
  settle_with(w, [&](appservice::StatusInputs& in) {
    in.deployment = deployment;
    in.service = service;
    in.issue = issue;
    in.issue_message = message;
  });
}

// Both children cached as desired, status as last written: nothing to do.
World settled_world(const std::string& sample = "nginx-app.yaml") {
  World w{app_object(sample), std::nullopt, std::nullopt};
  w.deployment = live_deployment(w.app);
  w.service = live_service(w.app);
  settle(w, &*w.deployment, &*w.service);
  return w;
}

World copy_world(const World& w) {
  World c{copy(w.app), std::nullopt, std::nullopt};
  if (w.deployment) c.deployment = copy(*w.deployment);
  if (w.service) c.service = copy(*w.service);
  return c;
}

// The Service cached as desired, no Deployment in the cache, status as last written for that.
World deployment_not_cached() {
  World w = settled_world();
  w.deployment.reset();
  settle(w, nullptr, &*w.service);
  return w;
}

World being_deleted(const std::string& finalizers) {
  World w = settled_world();
  set(w.app, "/metadata/deletionTimestamp", R"("2024-01-01T00:00:00Z")");
  set(w.app, "/metadata/finalizers", finalizers);
  return w;
}

// ---- replies -------------------------------------------------------------------------------

using Answer = std::function<Reply(const Request&)>;

Answer ok(const rapidjson::Value& object, int status = 200) {
  std::string body = to_json(object);
  return [body, status](const Request&) { return Reply::json(status, body); };
}

Answer api_error(int code, const std::string& reason, const std::string& cause = {}) {
  std::string body = R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":")" +
                     reason + R"(","message":"refused by the test","code":)" + std::to_string(code);
  if (!cause.empty()) body += R"(,"details":{"causes":[{"reason":")" + cause + R"("}]})";
  body += "}";
  return [body, code](const Request&) { return Reply::json(code, body); };
}

// The API server's answer to an apply that creates: the body as stored, with our Apply entry.
Reply created(const Request& r) {
  Doc object = parse_json(r.body);
  set(object, "/metadata/uid", R"("new-uid")");
  set(object, "/metadata/resourceVersion", R"("1")");
  set(object, "/metadata/managedFields",
      R"([{"manager":"appservice-operator","operation":"Apply","apiVersion":"v1",)"
      R"("fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{}},"f:spec":{}}}])");
  return Reply::json(201, to_json(object));
}

// The answer to the fold: the object with one Apply entry.
Reply folded(const Request&) {
  return Reply::json(200, R"({"metadata":{"name":"nginx-app","namespace":"demo","uid":"new-uid",)"
                          R"("resourceVersion":"2"}})");
}

Reply accepted(const Request&) {
  return Reply::json(200, "{}");
}

// ---- the script ----------------------------------------------------------------------------

// A body member that must have this JSON value, or be absent (json empty).
struct BodyPart {
  std::string pointer;
  std::string json;
};

// One request the reconciler must send, in order, and the answer it gets.
struct Exchange {
  Exchange(http::verb m, std::string t, std::string ct = {})
      : method(m), target(std::move(t)), content_type(std::move(ct)) {}

  http::verb method;
  std::string target;  // path and query, exactly
  std::string content_type;
  std::vector<BodyPart> body;
  Answer answer = accepted;
  std::optional<std::string> exact_body;  // compared as JSON

  Exchange with(std::string pointer, std::string json) && {
    body.push_back({std::move(pointer), std::move(json)});
    return std::move(*this);
  }
  Exchange without(std::string pointer) && {
    body.push_back({std::move(pointer), {}});
    return std::move(*this);
  }
  Exchange body_is(std::string json) && {
    exact_body = std::move(json);
    return std::move(*this);
  }
  Exchange reply(Answer a) && {
    answer = std::move(a);
    return std::move(*this);
  }
};

Exchange get(const std::string& path) {
  return Exchange(http::verb::get, path);
}
// A create by apply (no force) that only a missing object passes: the resourceVersion no object
// has.
Exchange create(const std::string& path) {
  return Exchange(http::verb::patch, path + kCreate, kApplyPatch)
      .with("/metadata/resourceVersion", R"("18446744073709551615")")
      .without("/metadata/uid")
      .reply(created);
}
Exchange json_patch(const std::string& path) {
  return Exchange(http::verb::patch, path, kJsonPatch);
}
// The fold of a create's managedFields entry into our Apply entry, guarded by the
// resourceVersion it was read at.
Exchange fold_at(const std::string& path, const std::string& rv) {
  return json_patch(path)
      .with("/0", R"({"op":"test","path":"/metadata/resourceVersion","value":)" + quoted(rv) + "}")
      .with("/1/op", R"("replace")")
      .with("/1/path", R"("/metadata/managedFields")")
      .with("/1/value/0/manager", R"("appservice-operator")")
      .with("/1/value/0/operation", R"("Apply")")
      .reply(folded);
}
Exchange apply(const std::string& path, const std::string& uid) {
  return Exchange(http::verb::patch, path + kApply, kApplyPatch).with("/metadata/uid", quoted(uid));
}
Exchange status_patch() {
  return Exchange(http::verb::patch, kAppServices + "/nginx-app/status", kMergePatch);
}
Exchange delete_child(const std::string& path, const std::string& policy, const std::string& uid,
                      const std::string& rv) {
  return Exchange(http::verb::delete_, path, kJson)
      .with("/propagationPolicy", quoted(policy))
      .with("/preconditions",
            R"({"uid":)" + quoted(uid) + R"(,"resourceVersion":)" + quoted(rv) + "}");
}
Exchange remove_finalizer(int index) {
  const std::string at = "/metadata/finalizers/" + std::to_string(index);
  return json_patch(kAppServices + "/nginx-app")
      .body_is(R"([{"op":"test","path":")" + at +
               R"(","value":"app.example.com/cleanup"},{"op":"remove","path":")" + at + "\"}]");
}

const std::string kDeployment = kDeployments + "/nginx-app";
const std::string kService = kServices + "/nginx-app";

struct ExpectedEvent {
  std::string type;
  std::string reason;
  std::string message;  // empty: not checked
};

struct Case {
  std::string name;
  World world;
  std::vector<Exchange> script;
  std::vector<ExpectedEvent> events;
  Kind result = Kind::done;
  std::chrono::milliseconds after{0};
  int passes = 1;  // reconciles in a row by one reconciler, with the cache as it was
  // If set, the AppService the cache holds from the second pass on (its informer saw a change).
  std::optional<Doc> app_after_first_pass = std::nullopt;
  // Passes the controller holds back (ctrl::WriteTracker) because the cache has not seen our last
  // write: the pass then runs once the AppService's cache holds what we wrote.
  int held_passes = 0;
};

// The newest resourceVersion a cache reflects, as its informer would report it: the newest of
// the objects it holds.
std::string newest_of(const ctrl::ObjectStore& store) {
  std::uint64_t newest = 0;
  for (const auto& key : store.keys()) {
    auto rv = ctrl::resource_version_number(ctrl::meta_resource_version(*store.get(key)));
    if (rv && *rv > newest) newest = *rv;
  }
  return newest ? std::to_string(newest) : std::string();
}

std::string describe(const std::vector<Request>& requests) {
  std::ostringstream out;
  for (const auto& r : requests) {
    out << "  " << r.method << " " << r.target << " " << r.body.substr(0, 300) << "\n";
  }
  return out.str();
}

void check_body(const Exchange& want, const Request& got) {
  Doc body;
  body.Parse(got.body.c_str());
  REQUIRE_FALSE(body.HasParseError());
  if (want.exact_body) CHECK(to_json(body) == to_json(parse_json(*want.exact_body)));
  for (const auto& part : want.body) {
    INFO("body member " << part.pointer);
    const rapidjson::Value* found = rapidjson::Pointer(part.pointer.c_str()).Get(body);
    if (part.json.empty()) {
      CHECK(found == nullptr);
      continue;
    }
    CHECK(found != nullptr);
    if (found) CHECK(to_json(*found) == to_json(parse_json(part.json)));
  }
}

void run(const Case& c) {
  INFO("case: " << c.name);
  asio::io_context io;
  ctrl::ObjectStore apps;
  ctrl::ObjectStore deployments;
  ctrl::ObjectStore services;
  const std::string key = "demo/" + parsed(c.world.app).name;
  // The AppService as the API server has it after our last status write.
  std::optional<Doc> written_app;
  std::size_t next = 0;
  FakeApiServer api(io, [&](const Request& r) {
    if (next >= c.script.size()) return api_error(500, "InternalError")(r);
    Reply reply = c.script[next++].answer(r);
    // A status write the script accepts without saying more is answered as the API server does:
    // the AppService with that status, at the next resourceVersion.
    const bool status_write = r.method == http::verb::patch && r.target.size() > 7 &&
                              r.target.compare(r.target.size() - 7, 7, "/status") == 0;
    if (status_write && reply.status == 200 && reply.body == "{}" && apps.get(key)) {
      Doc object = copy(*apps.get(key));
      const Doc patch = parse_json(r.body);
      set(object, "/status", to_json(patch["status"]));
      auto rv = ctrl::resource_version_number(ctrl::meta_resource_version(object));
      set(object, "/metadata/resourceVersion", quoted(std::to_string(rv.value_or(0) + 1)));
      reply = Reply::json(200, to_json(object));
      written_app = std::move(object);
    }
    return reply;
  });
  FakeApiServer event_sink(io, [](const Request& r) { return Reply::json(201, r.body); });
  auto cache = [](ctrl::ObjectStore& store, const std::optional<Doc>& object) {
    ctrl::informer::Replace list;
    if (object) list.items.push_back(std::make_shared<Doc>(copy(*object)));
    store.apply(std::move(list));
  };
  cache(apps, copy(c.world.app));
  cache(deployments, c.world.deployment);
  cache(services, c.world.service);

  ctrl::FakeClock clock;
  ctrl::EventRecorder::Options eo;
  eo.component = "appservice-operator";
  eo.instance = "test";
  ctrl::EventRecorder events(io.get_executor(), kube::testing::rest_client_for(io, event_sink), eo,
                             clock, nullptr);
  // Each cache holds its resource, as the informers' would (what ctrl::Client's writes find).
  ctrl::WriteTracker writes;
  auto scope = [](const char* api_version, const char* resource) {
    return ctrl::WriteTracker::Scope(kube::ResourcePath::from_api_version(api_version, resource),
                                     "");
  };
  writes.add_cache(
      apps, "apps", [&] { return newest_of(apps); }, scope("app.example.com/v1", "appservices"));
  writes.add_cache(
      deployments, "deployments", [&] { return newest_of(deployments); },
      scope("apps/v1", "deployments"));
  writes.add_cache(
      services, "services", [&] { return newest_of(services); }, scope("v1", "services"));
  appservice::AppServiceReconciler reconciler({&apps, &deployments, &services}, events, clock);
  const std::string name = parsed(c.world.app).name;
  ctrl::ReconcileContext ctx;
  ctx.log_prefix = "controller=appservice namespace=demo name=nginx-app reconcileID=test";
  // As the controller gives each reconcile (ctrl::Controller::process).
  auto client = ctrl::make_client(*kube::testing::rest_client_for(io, api), writes,
                                  ctrl::ObjectKey("demo", name), ctx.log_prefix);
  ctx.client = &client;
  ctrl::ReconcileResult result;
  int held = 0;
  auto body = [&]() -> asio::awaitable<void> {
    for (int i = 0; i < c.passes; ++i) {
      if (i == 1 && c.app_after_first_pass) cache(apps, copy(*c.app_after_first_pass));
      // As the controller does before each reconcile (ctrl::Controller::Options::write_tracker):
      // a cache behind our own last write holds the pass back until its informer delivers it.
      if (writes.behind(key)) {
        ++held;
        REQUIRE(written_app);
        cache(apps, copy(*written_app));
        REQUIRE_FALSE(writes.behind(key));
      }
      result = co_await reconciler.reconcile(ctrl::Request("demo", name), ctx);
    }
    REQUIRE(co_await events.flush(5s));
  };
  kube::testing::run_async(io, body(), [&] {
    api.stop();
    event_sink.stop();
  });

  const auto& seen = api.seen();
  INFO("requests sent:\n" << describe(seen));
  for (std::size_t i = 0; i < std::min(seen.size(), c.script.size()); ++i) {
    INFO("request " << i + 1);
    const Exchange& want = c.script[i];
    CHECK(seen[i].method == want.method);
    CHECK(seen[i].target == want.target);
    if (!want.content_type.empty()) CHECK(seen[i].content_type == want.content_type);
    if (!want.body.empty() || want.exact_body) check_body(want, seen[i]);
  }
  CHECK(seen.size() == c.script.size());

  std::vector<ExpectedEvent> got;
  for (const auto& r : event_sink.seen()) {
    REQUIRE(r.method == http::verb::post);
    Doc e = parse_json(r.body);
    got.push_back({e["type"].GetString(), e["reason"].GetString(), e["message"].GetString()});
  }
  std::ostringstream recorded;
  for (const auto& e : got)
    recorded << "  " << e.type << " " << e.reason << ": " << e.message << "\n";
  INFO("events recorded:\n" << recorded.str());
  CHECK(got.size() == c.events.size());
  for (std::size_t i = 0; i < std::min(got.size(), c.events.size()); ++i) {
    CHECK(got[i].type == c.events[i].type);
    CHECK(got[i].reason == c.events[i].reason);
    if (!c.events[i].message.empty()) CHECK(got[i].message == c.events[i].message);
  }

  CHECK(result.kind == c.result);
  if (c.result == Kind::requeue_after) CHECK(result.after == c.after);
  CHECK(held == c.held_passes);
}

World new_app(const std::string& sample = "nginx-app.yaml") {
  return World{app_object(sample), std::nullopt, std::nullopt};
}

}  // namespace

TEST_CASE("reconciler: a new AppService first gets only the guarded finalizer patch",
          "[appservice][reconciler]") {
  World bare = new_app();
  erase(bare.app, "/metadata/finalizers");
  World other = new_app();
  set(other.app, "/metadata/finalizers", R"(["example.com/keep"])");
  std::vector<Case> cases;
  cases.push_back(
      {"no finalizers yet",
       std::move(bare),
       {json_patch(kAppServices + "/nginx-app")
            .body_is(R"([{"op":"test","path":"/metadata/resourceVersion","value":"42"},)"
                     R"({"op":"add","path":"/metadata/finalizers",)"
                     R"("value":["app.example.com/cleanup"]}])")},
       {}});
  cases.push_back(
      {"someone else's finalizer is kept",
       std::move(other),
       {json_patch(kAppServices + "/nginx-app")
            .body_is(R"([{"op":"test","path":"/metadata/resourceVersion","value":"42"},)"
                     R"({"op":"add","path":"/metadata/finalizers/-",)"
                     R"("value":"app.example.com/cleanup"}])")},
       {}});
  for (const auto& c : cases) run(c);
}

TEST_CASE(
    "reconciler: a new AppService gets each child by an apply that only creates, then its status",
    "[appservice][reconciler]") {
  run({"new with finalizer",
       new_app(),
       {create(kDeployment)
            .with("/kind", R"("Deployment")")
            .with("/spec/replicas", "2")
            .with("/metadata/ownerReferences/0/uid", R"("6f1c7d1e-0000-4000-8000-000000000001")")
            .with("/metadata/ownerReferences/0/controller", "true")
            .with("/metadata/labels/app.example.com~1appservice", R"("nginx-app")"),
        create(kService).with("/kind", R"("Service")").with("/spec/ports/0/nodePort", "30002"),
        status_patch()
            .with("/status/observedGeneration", "3")
            .with("/status/selector", R"("app.example.com/appservice=nginx-app")")},
       {{"Normal", "Created", "Created Deployment demo/nginx-app"},
        {"Normal", "Created", "Created Service demo/nginx-app"}}});
}

TEST_CASE("reconciler: size 0 creates a Deployment of 0 replicas, Available as ScaledToZero",
          "[appservice][reconciler]") {
  World w = new_app("scaled-to-zero.yaml");
  // The sample's name is idle-app.
  const std::string dep = kDeployments + "/idle-app";
  const std::string svc = kServices + "/idle-app";
  run({"size 0",
       std::move(w),
       {create(dep).with("/spec/replicas", "0"), create(svc).with("/spec/ports/0/port", "8080"),
        Exchange(http::verb::patch, kAppServices + "/idle-app/status", kMergePatch)
            .with("/status/conditions/0/type", R"("Available")")
            .with("/status/conditions/0/status", R"("True")")
            .with("/status/conditions/0/reason", R"("ScaledToZero")")},
       {{"Normal", "Created", "Created Deployment demo/idle-app"},
        {"Normal", "Created", "Created Service demo/idle-app"}}});
}

TEST_CASE("reconciler: children and status as desired cost zero requests",
          "[appservice][reconciler]") {
  run({"everything matches", settled_world(), {}, {}});
  run({"everything matches, size 0", settled_world("scaled-to-zero.yaml"), {}, {}});
}

TEST_CASE("reconciler: a status written and not yet in the cache is not written again",
          "[appservice][reconciler][write_tracker]") {
  // A new generation with children as desired: one status write. The next pass (a child's event,
  // say) comes before the informer has our write: the cache shows the old status at the
  // resourceVersion written over. The write tracker holds that pass back until the cache has our
  // write, and then nothing is written.
  World w = settled_world();
  set(w.app, "/metadata/generation", "4");
  Case not_yet{"the cache at the version written over: held back, then no second write",
               copy_world(w),
               {status_patch().with("/status/observedGeneration", "4")},
               {},
               Kind::done,
               0ms,
               2,
               std::nullopt,
               1};
  run(not_yet);
  // The cache moved on (to the resourceVersion of our write or later) and still shows a status
  // that differs, as if someone had written over ours: nothing holds the pass back, the cache is
  // believed, and the status written again.
  Doc moved = copy(w.app);
  set(moved, "/metadata/resourceVersion", R"("43")");
  Case moved_on{"the cache moved on: written again",
                copy_world(w),
                {status_patch().with("/status/observedGeneration", "4"),
                 status_patch().with("/status/observedGeneration", "4")},
                {},
                Kind::done,
                0ms,
                2,
                std::move(moved)};
  run(moved_on);
}

TEST_CASE("reconciler: a drifted child is applied with its uid, Updated only if it changed",
          "[appservice][reconciler]") {
  std::vector<Case> cases;
  {
    World w = settled_world();
    set(*w.deployment, "/spec/replicas", "5");
    const Doc after = live_deployment(w.app, "101");
    cases.push_back({"replicas drifted",
                     std::move(w),
                     {apply(kDeployment, kDeploymentUid)
                          .with("/spec/replicas", "2")
                          .without("/metadata/resourceVersion")
                          .reply(ok(after))},
                     {{"Normal", "Updated", "Updated Deployment demo/nginx-app"}}});
  }
  {
    World w = settled_world();
    set(*w.service, "/spec/ports/0/nodePort", "30999");
    // The cache was behind: the server already had it right, the apply changes nothing.
    const Doc same = live_service(w.app, "200");
    cases.push_back(
        {"apply that changes nothing",
         std::move(w),
         {apply(kService, kServiceUid).with("/spec/ports/0/nodePort", "30002").reply(ok(same))},
         {}});
  }
  for (const auto& c : cases) run(c);
}

TEST_CASE("reconciler: a field removed from the spec is left out of the apply",
          "[appservice][reconciler]") {
  // The children were made from the sample (envs GREETING and POD_NAME, cpu and memory, ports 80
  // and 9090); then the spec loses one of them.
  auto edited = [](const char* pointer) {
    World w{app_object("clusterip-env.yaml"), std::nullopt, std::nullopt};
    w.deployment = stored(appservice::desired_deployment(parsed(w.app)), kDeploymentUid, "100");
    w.service = stored(appservice::desired_service(parsed(w.app)), kServiceUid, "200");
    erase(w.app, pointer);
    settle(w, &*w.deployment, &*w.service);
    return w;
  };
  const std::string dep = kDeployments + "/web-clusterip";
  const std::string svc = kServices + "/web-clusterip";
  auto new_dep = [](const World& w) { return live_deployment(w.app, "101"); };
  auto new_svc = [](const World& w) { return live_service(w.app, "201"); };
  const char* container = "/spec/template/spec/containers/0";
  std::vector<Case> cases;
  {
    World w = edited("/spec/envs/1");
    auto reply = new_dep(w);
    cases.push_back(
        {"env POD_NAME removed",
         std::move(w),
         {apply(dep, kDeploymentUid)
              .with(std::string(container) + "/env", R"([{"name":"GREETING","value":"hello"}])")
              .reply(ok(reply))},
         {{"Normal", "Updated", "Updated Deployment demo/web-clusterip"}}});
  }
  {
    World w = edited("/spec/resources");
    auto reply = new_dep(w);
    cases.push_back({"resources removed",
                     std::move(w),
                     {apply(dep, kDeploymentUid)
                          .without(std::string(container) + "/resources")
                          .with(std::string(container) + "/env/1/name", R"("POD_NAME")")
                          .reply(ok(reply))},
                     {{"Normal", "Updated", "Updated Deployment demo/web-clusterip"}}});
  }
  {
    World w = edited("/spec/ports/1");
    auto dep_reply = new_dep(w);
    auto svc_reply = new_svc(w);
    cases.push_back({"port 9090 removed",
                     std::move(w),
                     {apply(dep, kDeploymentUid)
                          .with(std::string(container) + "/ports/0/containerPort", "8080")
                          .without(std::string(container) + "/ports/1")
                          .reply(ok(dep_reply)),
                      apply(svc, kServiceUid)
                          .with("/spec/ports/0/port", "80")
                          .without("/spec/ports/1")
                          .reply(ok(svc_reply))},
                     {{"Normal", "Updated", "Updated Deployment demo/web-clusterip"},
                      {"Normal", "Updated", "Updated Service demo/web-clusterip"}}});
  }
  for (const auto& c : cases) run(c);
}

TEST_CASE("reconciler: an ownership conflict writes nothing, is re-checked by GET, and clears",
          "[appservice][reconciler]") {
  const Doc foreign = foreign_deployment();
  std::vector<Case> cases;
  {
    World w = deployment_not_cached();
    cases.push_back({"found by a refused create",
                     std::move(w),
                     {create(kDeployment).reply(api_error(409, "Conflict")),
                      get(kDeployment).reply(ok(foreign)),
                      status_patch()
                          .with("/status/conditions/2/type", R"("Degraded")")
                          .with("/status/conditions/2/status", R"("True")")
                          .with("/status/conditions/2/reason", R"("OwnershipConflict")")
                          .with("/status/conditions/2/message", quoted(kConflictMessage))},
                     {{"Warning", "OwnershipConflict", kConflictMessage}},
                     Kind::requeue_after,
                     30s});
  }
  auto standing = [&] {
    World w = settled_world();
    w.deployment.reset();
    settle_with(w, [&](appservice::StatusInputs& in) {
      in.service = &*w.service;
      in.deployment_foreign = true;
      in.issue = appservice::ReconcileIssue::ownership_conflict;
      in.issue_message = kConflictMessage;
    });
    return w;
  };
  cases.push_back({"standing: one GET, nothing else",
                   standing(),
                   {get(kDeployment).reply(ok(foreign))},
                   {},
                   Kind::requeue_after,
                   30s});
  cases.push_back({"standing, foreign object gone: created, Degraded=False, ConflictResolved",
                   standing(),
                   {get(kDeployment).reply(api_error(404, "NotFound")), create(kDeployment),
                    status_patch()
                        .with("/status/conditions/2/status", R"("False")")
                        .with("/status/conditions/2/reason", R"("AsExpected")")},
                   {{"Normal", "Created", "Created Deployment demo/nginx-app"},
                    {"Normal", "ConflictResolved", ""}}});
  {
    // Labelled as ours (so in the cache) but controlled by someone else: no request at all but
    // the status.
    World w = settled_world();
    w.deployment = foreign_deployment();
    cases.push_back({"a foreign child in the cache, never described as ours",
                     std::move(w),
                     {status_patch()
                          .with("/status/readyReplicas", "0")
                          .with("/status/availableReplicas", "0")
                          .with("/status/conditions/0/status", R"("False")")
                          .with("/status/conditions/0/reason", R"("DeploymentNotOwned")")
                          .with("/status/conditions/2/reason", R"("OwnershipConflict")")},
                     {{"Warning", "OwnershipConflict", kConflictMessage}},
                     Kind::requeue_after,
                     30s});
  }
  for (const auto& c : cases) run(c);
}

TEST_CASE("reconciler: a lagging cache's refused create of our own matching child is no change",
          "[appservice][reconciler]") {
  World w = settled_world();
  Doc ours = copy(*w.deployment);
  w.deployment.reset();
  set(ours, "/metadata/managedFields",
      R"([{"manager":"appservice-operator","operation":"Apply","fieldsType":"FieldsV1",)"
      R"("fieldsV1":{"f:spec":{}}}])");
  run({"stale cache",
       std::move(w),
       {create(kDeployment).reply(api_error(409, "Conflict")), get(kDeployment).reply(ok(ours))},
       {}});
}

TEST_CASE("reconciler: deletion follows the propagation policy, then drops our finalizer",
          "[appservice][reconciler]") {
  const std::vector<ExpectedEvent> deleted_both = {
      {"Normal", "Deleted", "Deleted Deployment demo/nginx-app"},
      {"Normal", "Deleted", "Deleted Service demo/nginx-app"},
      {"Normal", "CleanupComplete", "Deleted the children of AppService demo/nginx-app"}};
  std::vector<Case> cases;
  cases.push_back({"background",
                   being_deleted(R"(["app.example.com/cleanup"])"),
                   {delete_child(kDeployment, "Background", kDeploymentUid, "100"),
                    delete_child(kService, "Background", kServiceUid, "200"), remove_finalizer(0)},
                   deleted_both});
  cases.push_back({"foreground",
                   being_deleted(R"(["foregroundDeletion","app.example.com/cleanup"])"),
                   {delete_child(kDeployment, "Foreground", kDeploymentUid, "100"),
                    delete_child(kService, "Foreground", kServiceUid, "200"), remove_finalizer(1)},
                   deleted_both});
  cases.push_back({"orphan",
                   being_deleted(R"(["orphan","app.example.com/cleanup"])"),
                   {remove_finalizer(1)},
                   {{"Normal", "CleanupComplete", ""}}});
  cases.push_back({"a child already gone (404): no Deleted event for it",
                   being_deleted(R"(["app.example.com/cleanup"])"),
                   {delete_child(kDeployment, "Background", kDeploymentUid, "100")
                        .reply(api_error(404, "NotFound")),
                    delete_child(kService, "Background", kServiceUid, "200"), remove_finalizer(0)},
                   {{"Normal", "Deleted", "Deleted Service demo/nginx-app"},
                    {"Normal", "CleanupComplete", ""}}});
  cases.push_back({"a child changed since cached (409): finalizer kept, re-checked soon",
                   being_deleted(R"(["app.example.com/cleanup"])"),
                   {delete_child(kDeployment, "Background", kDeploymentUid, "100")
                        .reply(api_error(409, "Conflict")),
                    delete_child(kService, "Background", kServiceUid, "200")},
                   {{"Normal", "Deleted", "Deleted Service demo/nginx-app"}},
                   Kind::requeue_after,
                   1000ms});
  {
    World w = being_deleted(R"(["app.example.com/cleanup"])");
    w.deployment = foreign_deployment();
    cases.push_back(
        {"a child that is not ours is left alone",
         std::move(w),
         {delete_child(kService, "Background", kServiceUid, "200"), remove_finalizer(0)},
         {{"Normal", "Deleted", "Deleted Service demo/nginx-app"},
          {"Normal", "CleanupComplete", ""}}});
  }
  {
    World w = being_deleted(R"(["example.com/keep"])");
    cases.push_back({"without our finalizer: nothing", std::move(w), {}, {}});
  }
  for (const auto& c : cases) run(c);
}

TEST_CASE("reconciler: an invalid spec sets InvalidSpec, warns, writes no child, ends terminal",
          "[appservice][reconciler]") {
  World w = settled_world();
  set(w.app, "/spec/size", "-1");
  run({"invalid spec",
       std::move(w),
       {status_patch()
            .with("/status/conditions/2/type", R"("Degraded")")
            .with("/status/conditions/2/status", R"("True")")
            .with("/status/conditions/2/reason", R"("InvalidSpec")")},
       {{"Warning", "InvalidSpec", ""}},
       Kind::terminal});
}

TEST_CASE("reconciler: a terminating namespace's refusal of a create is not an error",
          "[appservice][reconciler]") {
  World w = new_app();
  settle(w, nullptr, nullptr);
  run({"namespace terminating",
       std::move(w),
       {create(kDeployment).reply(api_error(403, "Forbidden", "NamespaceTerminating")),
        create(kService).reply(api_error(403, "Forbidden", "NamespaceTerminating"))},
       {}});
}

TEST_CASE("reconciler: a Deployment with an older immutable selector is deleted to be recreated",
          "[appservice][reconciler]") {
  World w = settled_world();
  set(*w.deployment, "/spec/selector",
      R"({"matchLabels":{"app.kubernetes.io/instance":"nginx-app"}})");
  run({"old selector",
       std::move(w),
       {delete_child(kDeployment, "Background", kDeploymentUid, "100"),
        status_patch().with("/status/conditions/0/reason", R"("DeploymentNotFound")")},
       {{"Normal", "Recreating", ""}}});
}

TEST_CASE("reconciler: a refused write is Degraded, and the status still describes the live child",
          "[appservice][reconciler]") {
  std::vector<Case> cases;
  {
    World w = settled_world();
    set(*w.deployment, "/spec/replicas", "5");
    cases.push_back({"apply refused: Available and the counts stay those of the live Deployment",
                     std::move(w),
                     {apply(kDeployment, kDeploymentUid).reply(api_error(422, "Invalid")),
                      status_patch()
                          .with("/status/readyReplicas", "2")
                          .with("/status/availableReplicas", "2")
                          .with("/status/conditions/0/status", R"("True")")
                          .with("/status/conditions/1/status", R"("False")")
                          .with("/status/conditions/1/reason", R"("DeploymentApplyFailed")")
                          .with("/status/conditions/2/status", R"("True")")
                          .with("/status/conditions/2/reason", R"("DeploymentApplyFailed")")},
                     {{"Warning", "DeploymentApplyFailed", ""}},
                     Kind::error});
  }
  {
    // The same refusal again (the retry): the status already says it, so no write and no Event.
    World w = settled_world();
    set(*w.deployment, "/spec/replicas", "5");
    const Doc live = copy(*w.deployment);
    settle_with(w, [&](appservice::StatusInputs& in) {
      in.deployment = &live;
      in.service = &*w.service;
      in.issue = appservice::ReconcileIssue::reconcile_error;
      in.deployment_write_failed = true;
      in.issue_reason = "DeploymentApplyFailed";
      const Doc status =
          parse_json(R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid",)"
                     R"("message":"refused by the test","code":422})");
      in.issue_message = "applying Deployment demo/nginx-app: " +
                         kube::api_error_from_status(status, 422).describe();
    });
    cases.push_back({"the same refusal standing: no status write, no second Event",
                     std::move(w),
                     {apply(kDeployment, kDeploymentUid).reply(api_error(422, "Invalid"))},
                     {},
                     Kind::error});
  }
  {
    // The rate limiter's first retry comes 5 ms later, before our status write is in the cache:
    // the write tracker holds it back until the cache has our status; then the same status is not
    // written again, and the Warning is not sent again.
    World w = settled_world();
    set(*w.deployment, "/spec/replicas", "5");
    cases.push_back(
        {"refused again before the cache saw our status: one status write, one Warning",
         std::move(w),
         {apply(kDeployment, kDeploymentUid).reply(api_error(422, "Invalid")),
          status_patch().with("/status/conditions/2/reason", R"("DeploymentApplyFailed")"),
          apply(kDeployment, kDeploymentUid).reply(api_error(422, "Invalid"))},
         {{"Warning", "DeploymentApplyFailed", ""}},
         Kind::error,
         0ms,
         2,
         std::nullopt,
         1});
  }
  {
    World w = deployment_not_cached();
    cases.push_back({"create refused: the Deployment does not exist, Degraded says why",
                     std::move(w),
                     {create(kDeployment).reply(api_error(403, "Forbidden")),
                      status_patch()
                          .with("/status/conditions/0/reason", R"("DeploymentNotFound")")
                          .with("/status/conditions/2/reason", R"("DeploymentCreateFailed")")},
                     {{"Warning", "DeploymentCreateFailed", ""}},
                     Kind::error});
  }
  for (const auto& c : cases) run(c);
}

TEST_CASE("reconciler: Pods the cluster refuses are Degraded=ReplicaFailure until they are not",
          "[appservice][reconciler]") {
  // The ReplicaSet's words, which name the refused Pod.
  auto failure = [](const std::string& pod) {
    return R"({"type":"ReplicaFailure","status":"True","reason":"FailedCreate","message":)"
           R"("pods \")" +
           pod + R"(\" is forbidden: exceeded quota: no-pods"})";
  };
  auto failing = [&](const std::string& pod) {
    World w = settled_world();
    set(*w.deployment, "/status/availableReplicas", "0");
    set(*w.deployment, "/status/readyReplicas", "0");
    set(*w.deployment, "/status/replicas", "0");
    set(*w.deployment, "/status/conditions",
        R"([{"type":"Available","status":"False"},)"
        R"({"type":"Progressing","status":"True","reason":"ReplicaSetUpdated"},)" +
            failure(pod) + "]");
    return w;
  };
  std::vector<Case> cases;
  {
    World w = failing("nginx-app-5d4f-x");
    cases.push_back({"quota refuses the Pods: Degraded, one Warning, no child write",
                     std::move(w),
                     {status_patch()
                          .with("/status/conditions/2/status", R"("True")")
                          .with("/status/conditions/2/reason", R"("ReplicaFailure")")
                          .with("/status/conditions/2/message",
                                R"("Deployment nginx-app cannot create its Pods (FailedCreate): )"
                                R"(pods \"nginx-app-5d4f-x\" is forbidden: exceeded quota: )"
                                R"(no-pods")")},
                     {{"Warning", "ReplicaFailure", ""}}});
  }
  {
    // Standing: the status already says it. No write, no second Warning.
    World w = failing("nginx-app-5d4f-x");
    const Doc before = copy(*w.deployment);
    settle(w, &before, &*w.service);
    cases.push_back({"standing: nothing written, no second Warning", std::move(w), {}, {}});
  }
  {
    // The cause is gone: Degraded clears with a Normal Event.
    World w = failing("nginx-app-5d4f-x");
    const Doc before = copy(*w.deployment);
    settle(w, &before, &*w.service);
    w.deployment = live_deployment(w.app);
    cases.push_back({"cause gone: Degraded=False, Recovered",
                     std::move(w),
                     {status_patch()
                          .with("/status/conditions/2/status", R"("False")")
                          .with("/status/conditions/2/reason", R"("AsExpected")")},
                     {{"Normal", "Recovered", ""}}});
  }
  {
    World w = settled_world();
    set(*w.deployment, "/status/conditions/1",
        R"({"type":"Progressing","status":"False","reason":"ProgressDeadlineExceeded",)"
        R"("message":"ReplicaSet \"nginx-app-5d4f\" has timed out progressing."})");
    cases.push_back({"a rollout past its deadline: Degraded=ProgressDeadlineExceeded",
                     std::move(w),
                     {status_patch()
                          .with("/status/conditions/1/reason", R"("ProgressDeadlineExceeded")")
                          .with("/status/conditions/2/reason", R"("ProgressDeadlineExceeded")")},
                     {{"Warning", "ProgressDeadlineExceeded", ""}}});
  }
  for (const auto& c : cases) run(c);
}

TEST_CASE("reconciler: our own orphans are adopted, anything else of the name is not",
          "[appservice][reconciler]") {
  std::vector<Case> cases;
  {
    // Left by `kubectl delete --cascade=orphan`: the garbage collector took our ownerReference.
    World w = settled_world();
    erase(*w.deployment, "/metadata/ownerReferences");
    const Doc applied = live_deployment(w.app, "101");
    const Doc owner = copy(w.app);
    cases.push_back(
        {"no controller, our labels: the owner read fresh, adopted with the uid guard",
         std::move(w),
         {get(kAppServices + "/nginx-app").reply(ok(owner)),
          apply(kDeployment, kDeploymentUid)
              .with("/metadata/ownerReferences/0/uid", R"("6f1c7d1e-0000-4000-8000-000000000001")")
              .with("/metadata/ownerReferences/0/controller", "true")
              .reply(ok(applied))},
         {{"Normal", "Adopted",
           "Adopted Deployment demo/nginx-app: it had no controller and carries this "
           "AppService's labels"}}});
  }
  {
    // The cache is behind an orphan delete: the server's copy of the owner is being deleted, so
    // the children it just released are not taken back.
    World w = settled_world();
    erase(*w.deployment, "/metadata/ownerReferences");
    Doc owner = copy(w.app);
    set(owner, "/metadata/deletionTimestamp", R"("2024-01-01T00:00:00Z")");
    cases.push_back({"the owner is being deleted on the server: not adopted, looked at soon",
                     std::move(w),
                     {get(kAppServices + "/nginx-app").reply(ok(owner))},
                     {},
                     Kind::requeue_after,
                     1s});
  }
  {
    // Our labels but an older immutable selector: adopting it would mean deleting it.
    World w = deployment_not_cached();
    Doc old = live_deployment(w.app);
    erase(old, "/metadata/ownerReferences");
    set(old, "/spec/selector", R"({"matchLabels":{"app.kubernetes.io/instance":"nginx-app"}})");
    w.deployment = std::move(old);
    cases.push_back({"our labels, another selector: a conflict, never deleted",
                     std::move(w),
                     {status_patch().with("/status/conditions/2/reason", R"("OwnershipConflict")")},
                     {{"Warning", "OwnershipConflict", ""}},
                     Kind::requeue_after,
                     30s});
  }
  {
    // Someone's own Deployment of the same name (no labels of ours), found by the refused create.
    World w = deployment_not_cached();
    Doc stranger = live_deployment(w.app);
    erase(stranger, "/metadata/ownerReferences");
    erase(stranger, "/metadata/labels/app.example.com~1appservice");
    const std::string message =
        "Deployment demo/nginx-app exists and is not controlled by this AppService";
    cases.push_back({"no controller, not our labels: a conflict, never taken over",
                     std::move(w),
                     {create(kDeployment).reply(api_error(409, "Conflict")),
                      get(kDeployment).reply(ok(stranger)),
                      status_patch()
                          .with("/status/conditions/0/reason", R"("DeploymentNotOwned")")
                          .with("/status/conditions/2/reason", R"("OwnershipConflict")")
                          .with("/status/conditions/2/message", quoted(message))},
                     {{"Warning", "OwnershipConflict", message}},
                     Kind::requeue_after,
                     30s});
  }
  for (const auto& c : cases) run(c);
}

TEST_CASE("reconciler: a create's Update entry seen in the cache is read whole and folded",
          "[appservice][reconciler][managedfields]") {
  // The child as the API server has it when the fold never ran: our labels (the new selector label
  // too), ownerReference and a create's Update entry.
  auto unfolded = [](const Doc& child) {
    Doc whole = copy(child);
    set(whole, "/metadata/managedFields", kUnfoldedWhole);
    return whole;
  };
  auto folded_reply = [](const Doc& child) {
    Doc after = copy(child);
    set(after, "/metadata/resourceVersion", R"("101")");
    return after;
  };
  std::vector<Case> cases;
  {
    // An earlier version's create (a POST: an Update entry), cached, matching: the fold waits
    // until an apply is due, so nothing is read or written.
    World w = settled_world();
    set(*w.deployment, "/metadata/managedFields", kUnfoldedSummary);
    cases.push_back({"created, matching: no read, no fold", std::move(w), {}, {}});
  }
  {
    // The same child drifted: read whole, folded (guarded by resourceVersion), then applied.
    World w = settled_world();
    set(*w.deployment, "/metadata/managedFields", kUnfoldedSummary);
    set(*w.deployment, "/spec/replicas", "5");
    const Doc whole = unfolded(*w.deployment);
    const Doc after = folded_reply(*w.deployment);
    const Doc applied = live_deployment(w.app, "102");
    cases.push_back(
        {"created, then drifted: GET, the guarded fold, then the apply",
         std::move(w),
         {get(kDeployment).reply(ok(whole)),
          fold_at(kDeployment, "100")
              .with("/1/value/1/subresource", R"("status")")
              .reply(ok(after)),
          apply(kDeployment, kDeploymentUid).with("/spec/replicas", "2").reply(ok(applied))},
         {{"Normal", "Updated", "Updated Deployment demo/nginx-app"}}});
  }
  {
    // The read shows another object of that name (replaced since we cached it): no fold, no
    // apply; looked at again soon, with the new one in the cache.
    World w = settled_world();
    set(*w.deployment, "/metadata/managedFields", kUnfoldedSummary);
    set(*w.deployment, "/spec/replicas", "5");
    Doc replaced = unfolded(*w.deployment);
    set(replaced, "/metadata/uid", R"("another-uid")");
    cases.push_back({"replaced since cached: no fold, re-checked soon",
                     std::move(w),
                     {get(kDeployment).reply(ok(replaced))},
                     {},
                     Kind::requeue_after,
                     1s});
  }
  {
    // Folded, then the spec lost a field: the apply now removes it.
    World w{app_object("clusterip-env.yaml"), std::nullopt, std::nullopt};
    w.deployment = live_deployment(w.app);
    w.service = live_service(w.app);
    set(*w.deployment, "/metadata/managedFields", kUnfoldedSummary);
    erase(w.app, "/spec/envs/1");
    settle(w, &*w.deployment, &*w.service);
    const Doc whole = unfolded(*w.deployment);
    const Doc after = folded_reply(*w.deployment);
    const Doc applied = live_deployment(w.app, "102");
    const std::string dep = kDeployments + "/web-clusterip";
    cases.push_back({"folded, then a removed env var is applied away",
                     std::move(w),
                     {get(dep).reply(ok(whole)), fold_at(dep, "100").reply(ok(after)),
                      apply(dep, kDeploymentUid)
                          .with("/spec/template/spec/containers/0/env",
                                R"([{"name":"GREETING","value":"hello"}])")
                          .reply(ok(applied))},
                     {{"Normal", "Updated", "Updated Deployment demo/web-clusterip"}}});
  }
  {
    // Found through a refused create (a lagging cache), with its Update entry, drifted: the GET
    // already has the whole managedFields, so no second read before the fold.
    World w = settled_world();
    set(*w.deployment, "/spec/replicas", "5");
    const Doc whole = unfolded(*w.deployment);
    const Doc after = folded_reply(*w.deployment);
    const Doc applied = live_deployment(w.app, "102");
    w.deployment.reset();
    cases.push_back(
        {"found by a refused create, drifted: folded from that read, then applied",
         std::move(w),
         {create(kDeployment).reply(api_error(409, "Conflict")), get(kDeployment).reply(ok(whole)),
          fold_at(kDeployment, "100").reply(ok(after)),
          apply(kDeployment, kDeploymentUid).with("/spec/replicas", "2").reply(ok(applied))},
         {{"Normal", "Updated", "Updated Deployment demo/nginx-app"}}});
  }
  {
    // A Service an older version made: no selector label, selecting on the instance label.
    World w = settled_world();
    erase(*w.service, "/metadata/labels/app.example.com~1appservice");
    set(*w.service, "/spec/selector", R"({"app.kubernetes.io/instance":"nginx-app"})");
    set(*w.service, "/metadata/managedFields", kUnfoldedSummary);
    const Doc whole = unfolded(*w.service);
    const Doc after = folded_reply(*w.service);
    const Doc applied = live_service(w.app, "201");
    cases.push_back({"a child of an older version: folded, then applied",
                     std::move(w),
                     {get(kService).reply(ok(whole)), fold_at(kService, "200").reply(ok(after)),
                      apply(kService, kServiceUid)
                          .with("/spec/selector", R"({"app.example.com/appservice":"nginx-app"})")
                          .reply(ok(applied))},
                     {{"Normal", "Updated", "Updated Service demo/nginx-app"}}});
  }
  {
    // Our labels are gone (an older version's child) but it holds no Update entry: nothing to
    // read or fold, only the apply that puts the labels back.
    World w = settled_world();
    erase(*w.service, "/metadata/labels/app.example.com~1appservice");
    const Doc applied = live_service(w.app, "201");
    cases.push_back({"no Update entry: no read, no fold",
                     std::move(w),
                     {apply(kService, kServiceUid)
                          .with("/metadata/labels/app.example.com~1appservice", R"("nginx-app")")
                          .reply(ok(applied))},
                     {{"Normal", "Updated", "Updated Service demo/nginx-app"}}});
  }
  for (const auto& c : cases) run(c);
}
