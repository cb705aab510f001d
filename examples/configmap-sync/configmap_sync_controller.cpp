// SPDX-License-Identifier: Apache-2.0
#include "configmap_sync_controller.h"

#include <string>
#include <vector>

namespace configmap_sync {

std::unique_ptr<ConfigMapSyncReconciler> add_controller(asop::App& app) {
  auto& sources = app.informer(kConfigMap, std::string(kSourceLabel) + "=true");
  auto& copies = app.informer(kConfigMap, kCopyOfNameLabel);
  auto& namespaces = app.informer(kNamespace, std::string(kSyncLabel) + "=true");
  auto reconciler = std::make_unique<ConfigMapSyncReconciler>(
      ConfigMapSyncReconciler::Stores{&sources.store(), &copies.store(), &namespaces.store()},
      app.events());
  app.controller("configmap-sync")
      .for_kind(kConfigMap, sources)
      .watches(copies, ConfigMapSyncReconciler::source_of_copy)
      .watches(namespaces,
               [&sources](const asop::StoreChange&) {  // a namespace asks, or stops
                 std::vector<asop::Request> all;
                 for (const auto& key : sources.store().keys())
                   all.push_back(asop::Request::from_key(key));
                 return all;
               })
      .complete(*reconciler);
  return reconciler;
}

}  // namespace configmap_sync
