// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the test kit's own e2e cases share (kit_test.cpp, kit_faults_test.cpp): ConfigMap bodies
// and a controller that gives each labelled ConfigMap an owned copy.

#include <rapidjson/document.h>

#include <memory>
#include <string>

#include "asop/app.h"
#include "asop/client.h"
#include "asop/kind.h"
#include "asop/object.h"
#include "asop/owner.h"
#include "asop/reconciler.h"

namespace kit {

inline const asop::Kind kConfigMap{"v1", "ConfigMap", "configmaps"};

inline std::string configmap(const std::string& name, const std::string& labels = "{}",
                             const std::string& owner_references = "[]") {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name + R"(","labels":)" +
         labels + R"(,"ownerReferences":)" + owner_references + R"(},"data":{"k":"v"}})";
}

// Each ConfigMap of `sources` (labelled kit=source) gets an owned copy NAME-copy (labelled
// kit=copy), created when `copies` has none.
class CopyReconciler final : public asop::Reconciler {
 public:
  CopyReconciler(const asop::Cache& sources, const asop::Cache& copies)
      : sources_(sources), copies_(copies) {}
  boost::asio::awaitable<asop::ReconcileResult> reconcile(
      asop::Request request, const asop::ReconcileContext& context) override {
    auto& client = *context.client;
    auto source = client.get(sources_, request);
    const std::string name = request.name + "-copy";
    if (!source || client.get(copies_, {request.ns, name})) co_return asop::ReconcileResult::done();
    rapidjson::Document copy;
    copy.Parse(configmap(name, R"({"kit":"copy"})"));
    asop::set_controller_reference(copy, asop::owner_of(kConfigMap, *source), copy.GetAllocator());
    auto made = co_await client.apply_create(
        kConfigMap.collection().in_namespace(request.ns).named(name), copy, "kit-test", "no copy");
    if (!made) co_return asop::ReconcileResult::failed("creating the copy", made.error());
    co_return asop::ReconcileResult::done();
  }

 private:
  const asop::Cache& sources_;
  const asop::Cache& copies_;
};

// The copy controller on `app` (its two informers and the controller), as a main() would wire it;
// the reconciler must outlive the app's run.
inline std::unique_ptr<CopyReconciler> add_copy_controller(asop::App& app) {
  auto& sources = app.informer(kConfigMap, "kit=source");
  auto& copies = app.informer(kConfigMap, "kit=copy");
  auto reconciler = std::make_unique<CopyReconciler>(sources.store(), copies.store());
  app.controller("copy").for_kind(kConfigMap, sources).owns(copies).complete(*reconciler);
  return reconciler;
}

}  // namespace kit
