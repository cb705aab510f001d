// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ctrl/cache/object_store.h"
#include "ctrl/client.h"
#include "ctrl/events/event_recorder.h"
#include "ctrl/kind.h"
#include "ctrl/reconciler.h"

namespace configmap_sync {

// A source is a ConfigMap labelled configmap-sync.example.com/source=true. Every namespace
// labelled configmap-sync.example.com/sync=true gets a copy of it (same name, its data and
// binaryData), labelled with where it came from. Copies live in other namespaces, where an
// ownerReference may not point, so the labels are the ownership: only a ConfigMap carrying them
// is a copy, and only a copy is ever changed or deleted.
inline constexpr const char* kSourceLabel = "configmap-sync.example.com/source";
inline constexpr const char* kSyncLabel = "configmap-sync.example.com/sync";
inline constexpr const char* kCopyOfNamespaceLabel = "configmap-sync.example.com/copy-of-namespace";
inline constexpr const char* kCopyOfNameLabel = "configmap-sync.example.com/copy-of-name";
inline constexpr const char* kFinalizer = "configmap-sync.example.com/cleanup";
inline constexpr const char* kFieldManager = "configmap-sync";

inline const ctrl::Kind kConfigMap{"v1", "ConfigMap", "configmaps"};
inline const ctrl::Kind kNamespace{"v1", "Namespace", "namespaces", ctrl::Kind::Scope::cluster};

// Reconciles one source (its key): a finalizer first; then a copy in every namespace that asks,
// written only when missing or different (a hand edit or delete of a copy is put back), and copies
// in namespaces that stopped asking deleted; when the source is deleted, every copy, then the
// finalizer. Events on the source say what changed.
class ConfigMapSyncReconciler final : public ctrl::Reconciler {
 public:
  struct Stores {
    const ctrl::ObjectStore* sources;
    const ctrl::ObjectStore* copies;
    const ctrl::ObjectStore* namespaces;
  };
  // Reads and writes go through each reconcile's ctrl::Client (ReconcileContext::client).
  ConfigMapSyncReconciler(Stores stores, ctrl::EventRecorder& events);

  boost::asio::awaitable<ctrl::ReconcileResult> reconcile(
      ctrl::Request request, const ctrl::ReconcileContext& context) override;

  // The source a copy's change concerns (for the builder's watches()).
  static std::vector<ctrl::Request> source_of_copy(const ctrl::StoreChange& change);

 private:
  boost::asio::awaitable<ctrl::ReconcileResult> sync(const rapidjson::Document& source,
                                                     ctrl::Client& client,
                                                     const ctrl::ReconcileContext& context);
  boost::asio::awaitable<ctrl::ReconcileResult> clean_up(const rapidjson::Document& source,
                                                         ctrl::Client& client,
                                                         const ctrl::ReconcileContext& context);
  boost::asio::awaitable<ctrl::ReconcileResult> source_gone(ctrl::Client& client);
  // Removes our finalizer from `source` (as last seen), guarded.
  boost::asio::awaitable<ctrl::ReconcileResult> remove_finalizer(const rapidjson::Value& source,
                                                                 ctrl::Client& client,
                                                                 std::string why);
  // Deletes the copies of `source` in namespaces not in `keep`; the namespaces deleted from, or
  // the first error.
  boost::asio::awaitable<kube::Result<std::vector<std::string>>> delete_copies(
      const ctrl::ObjectKey& source, const std::vector<std::string>& keep, ctrl::Client& client);
  void record(const rapidjson::Document& source, ctrl::EventType type, std::string reason,
              std::string message);

  Stores stores_;
  ctrl::EventRecorder& events_;
};

}  // namespace configmap_sync
