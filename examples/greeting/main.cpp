// SPDX-License-Identifier: Apache-2.0
// greeting: the controller docs/library.md writes from an empty directory. A Greeting (crd.yaml)
// owns a ConfigMap that holds its message; a finalizer, a Ready condition and Events.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "asop/app.h"
#include "asop/client.h"
#include "asop/conditions.h"
#include "asop/finalizers.h"
#include "asop/owner.h"

const asop::Kind kGreeting{"demo.example.com/v1", "Greeting", "greetings"};
const asop::Kind kConfigMap{"v1", "ConfigMap", "configmaps"};
constexpr const char* kFinalizer = "demo.example.com/cleanup";
constexpr const char* kFieldManager = "greeting";
constexpr const char* kManagedBy = "app.kubernetes.io/managed-by=greeting";

// The ConfigMap a Greeting owns, as a server-side apply body: only the fields we own.
rapidjson::Document desired_child(const rapidjson::Value& greeting) {
  rapidjson::Document child(rapidjson::kObjectType);
  auto& a = child.GetAllocator();
  const auto text = [&a](std::string_view s) {
    return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
  };
  const std::string name = std::string(asop::meta_name(greeting)) + "-greeting";
  const auto* spec = asop::json::member(&greeting, "spec");
  rapidjson::Value labels(rapidjson::kObjectType), metadata(rapidjson::kObjectType),
      data(rapidjson::kObjectType);
  labels.AddMember("app.kubernetes.io/managed-by", "greeting", a);
  metadata.AddMember("name", text(name), a);
  metadata.AddMember("namespace", text(asop::meta_namespace(greeting)), a);
  metadata.AddMember("labels", labels, a);
  data.AddMember("message", text(asop::json::string_view(asop::json::member(spec, "message"))), a);
  child.AddMember("apiVersion", "v1", a);
  child.AddMember("kind", "ConfigMap", a);
  child.AddMember("metadata", metadata, a);
  child.AddMember("data", data, a);
  asop::set_controller_reference(child, asop::owner_of(kGreeting, greeting), a);
  return child;
}
class GreetingReconciler final : public asop::Reconciler {
 public:
  GreetingReconciler(const asop::Cache& greetings, const asop::Cache& children,
                     asop::EventRecorder& events)
      : greetings_(greetings), children_(children), events_(events) {}

  boost::asio::awaitable<asop::ReconcileResult> reconcile(
      asop::Request request, const asop::ReconcileContext& context) override {
    asop::Client& client = *context.client;
    auto greeting = client.get(greetings_, request);  // from the cache; null: gone
    if (!greeting) co_return asop::ReconcileResult::done();
    const auto path = kGreeting.collection().in_namespace(request.ns).named(request.name);

    switch (asop::finalizer_step(*greeting, kFinalizer)) {
      case asop::FinalizerStep::add: {  // before the child exists
        auto added = co_await client.add_finalizer(path, *greeting, kFinalizer);
        if (!added) co_return asop::ReconcileResult::failed("adding the finalizer", added.error());
        co_return asop::ReconcileResult::done();  // the cache's update brings the key back
      }
      case asop::FinalizerStep::clean_up: {  // deleting: clean up (idempotent), then let it go
        // The owned ConfigMap goes with the Greeting (garbage collector); clean up here what no
        // ownerReference covers.
        events_.record(kGreeting, *greeting, asop::EventType::normal, "CleanupComplete",
                       "cleaned up; removing the finalizer");
        auto removed = co_await client.remove_finalizer(path, *greeting, kFinalizer, "cleaned up");
        if (!removed)
          co_return asop::ReconcileResult::failed("removing the finalizer", removed.error());
        co_return asop::ReconcileResult::done();
      }
      case asop::FinalizerStep::nothing:  // deleting, and not ours to hold
        co_return asop::ReconcileResult::done();
      case asop::FinalizerStep::apply:
        break;
    }

    // The child: created when missing (never taking over a ConfigMap of that name that is not
    // ours), put back when it drifted, left alone when it is as it should be.
    const auto desired = desired_child(*greeting);
    const std::string child_name = request.name + "-greeting";
    const auto child_path = kConfigMap.collection().in_namespace(request.ns).named(child_name);
    auto child = client.get(children_, {request.ns, child_name});
    const auto owner = child ? asop::controller_owner(*child) : std::nullopt;
    asop::Condition ready{.type = "Ready",
                          .status = "True",
                          .reason = "ChildReady",
                          .message = "ConfigMap " + child_name + " holds the message"};
    std::optional<asop::ApiError> refused;  // the API server refused our write: retried
    const auto not_ready = [&](std::string reason, std::string message) {
      ready.status = "False";
      ready.reason = std::move(reason);
      ready.message = std::move(message);
      events_.record(kGreeting, *greeting, asop::EventType::warning, ready.reason, ready.message);
    };
    if (child && (!owner || owner->uid != asop::meta_uid(*greeting))) {
      not_ready("ChildConflict", "ConfigMap " + child_name + " belongs to someone else");
    } else if (!child) {
      auto created = co_await client.apply_create(child_path, desired, kFieldManager, "no child");
      if (!created && (created.error().is(asop::Errc::conflict) ||
                       created.error().is(asop::Errc::already_exists))) {
        not_ready("ChildConflict", "a ConfigMap " + child_name + " that is not ours exists");
      } else if (!created) {  // a quota, an admission policy, RBAC: say so, then retry
        refused = created.error();
        not_ready("ChildFailed", "creating ConfigMap " + child_name + ": " + refused->describe());
      } else {
        events_.record(kGreeting, *greeting, asop::EventType::normal, "Created",
                       "created ConfigMap " + child_name);
      }
    } else if (const auto* data = asop::json::member(child.get(), "data");
               !data || *data != desired["data"]) {
      auto applied = co_await client.apply(child_path, desired, kFieldManager, "child drifted");
      if (!applied) {
        refused = applied.error();
        not_ready("ChildFailed", "updating ConfigMap " + child_name + ": " + refused->describe());
      }
    }

    // The status: conditions with apimachinery's rules, written only when it changed.
    rapidjson::Document status(rapidjson::kObjectType);
    auto& a = status.GetAllocator();
    auto conditions = asop::conditions_from_json(
        asop::json::member(asop::json::member(greeting.get(), "status"), "conditions"));
    ready.observed_generation = asop::meta_generation(*greeting);
    asop::set_status_condition(conditions, ready, asop::now_rfc3339());
    rapidjson::Value list(rapidjson::kArrayType);
    for (const auto& c : conditions) list.PushBack(asop::condition_to_json(c, a), a);
    status.AddMember("observedGeneration", asop::meta_generation(*greeting), a);
    status.AddMember("conditions", list, a);
    auto written = co_await client.update_status_if_changed(path, *greeting, status, "status");
    if (!written) co_return asop::ReconcileResult::failed("writing the status", written.error());
    if (refused) co_return asop::ReconcileResult::failed("writing the child", *refused);
    if (ready.status == "False") {  // the other ConfigMap is not cached: look again later
      co_return asop::ReconcileResult::requeue(std::chrono::minutes(1));
    }
    co_return asop::ReconcileResult::done();
  }

 private:
  const asop::Cache& greetings_;
  const asop::Cache& children_;
  asop::EventRecorder& events_;
};
int main(int argc, char** argv) {
  asop::App app({"greeting", "0.1.0", "usage: greeting [flags]\n", "greeting.demo.example.com"});
  if (auto exit_code = app.init(argc, argv)) return *exit_code;  // flags, config, manager
  auto& greetings = app.informer(kGreeting);
  auto& children = app.informer(kConfigMap, kManagedBy);  // only ours (label selector)
  GreetingReconciler reconciler(greetings.store(), children.store(), app.events());
  app.controller("greeting")
      .for_kind(kGreeting, greetings, asop::Updates::skip_status_only)
      .owns(children)
      .complete(reconciler);
  return app.run();  // until SIGTERM; exit 0, or 1 on a failure
}
