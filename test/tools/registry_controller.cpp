// SPDX-License-Identifier: Apache-2.0
// registry_controller: a controller on the public runtime API (src/asop/) whose keys all write
// one shared object, for read_your_writes_test.sh (issue 44). Every ConfigMap labelled
// registry.example.com/member=true registers itself in the ConfigMap labelled
// registry.example.com/registry=true of its namespace: a merge patch that sets data[NAME] to its
// uid, and a Registered Event on the member. A change of the registry queues every member of its
// namespace. Behind a delayed watch, the registry's events arrive after several members wrote
// it: a member reconciled from a cache that lacks its own entry would register again, and the
// test would count the second write and Event.
#include <string>
#include <utility>
#include <vector>

#include "asop/app.h"
#include "asop/client.h"
#include "asop/events.h"
#include "asop/kind.h"
#include "asop/object.h"
#include "asop/reconciler.h"

namespace {

constexpr const char* kUsage = R"(usage: registry_controller [flags]

Registers every ConfigMap labelled registry.example.com/member=true in the ConfigMap labelled
registry.example.com/registry=true of its namespace (data[NAME] = its uid).

Flags: the runtime's (docs/library.md).
)";

const asop::Kind kConfigMap{"v1", "ConfigMap", "configmaps"};

class RegistryReconciler final : public asop::Reconciler {
 public:
  RegistryReconciler(const asop::Cache& members, const asop::Cache& registries,
                     asop::EventRecorder& events)
      : members_(members), registries_(registries), events_(events) {}

  boost::asio::awaitable<asop::ReconcileResult> reconcile(
      asop::Request request, const asop::ReconcileContext& context) override {
    auto& client = *context.client;
    auto member = client.get(members_, request);
    if (!member) co_return asop::ReconcileResult::done();
    const auto registries = client.list(registries_, request.ns);
    if (registries.size() != 1) co_return asop::ReconcileResult::done();  // its add queues us
    const auto& registry = *registries.front();
    const std::string uid(asop::meta_uid(*member));
    const auto* data = asop::json::member(&registry, "data");
    if (asop::json::string_view(asop::json::member(data, request.name.c_str())) == uid)
      co_return asop::ReconcileResult::done();

    rapidjson::Document patch(rapidjson::kObjectType);
    auto& a = patch.GetAllocator();
    rapidjson::Value entries(rapidjson::kObjectType);
    entries.AddMember(rapidjson::Value(request.name.c_str(), a), rapidjson::Value(uid.c_str(), a),
                      a);
    patch.AddMember("data", entries, a);
    const auto path =
        kConfigMap.collection().in_namespace(request.ns).named(asop::meta_name(registry));
    auto written = co_await client.patch(path, asop::PatchType::merge, patch, "register");
    if (!written) co_return asop::ReconcileResult::failed("registering", written.error());
    events_.record(kConfigMap, *member, asop::EventType::normal, "Registered",
                   "registered in ConfigMap " + std::string(asop::meta_name(registry)));
    co_return asop::ReconcileResult::done();
  }

 private:
  const asop::Cache& members_;
  const asop::Cache& registries_;
  asop::EventRecorder& events_;
};

}  // namespace

int main(int argc, char** argv) {
  asop::App app({"registry-controller", "0.1.0", kUsage, "registry.example.com"});
  if (auto exit_code = app.init(argc, argv)) return *exit_code;
  auto& members = app.informer(kConfigMap, "registry.example.com/member=true");
  auto& registries = app.informer(kConfigMap, "registry.example.com/registry=true");
  RegistryReconciler reconciler(members.store(), registries.store(), app.events());
  app.controller("registry")
      .for_kind(kConfigMap, members)
      .watches(registries,
               [&members](const asop::StoreChange& change) {  // every member of its namespace
                 const auto& registry = change.new_object ? change.new_object : change.old_object;
                 const auto ns = asop::meta_namespace(*registry);
                 std::vector<asop::Request> all;
                 for (const auto& key : members.store().keys()) {
                   auto member = asop::Request::from_key(key);
                   if (member.ns == ns) all.push_back(std::move(member));
                 }
                 return all;
               })
      .complete(reconciler);
  return app.run();
}
