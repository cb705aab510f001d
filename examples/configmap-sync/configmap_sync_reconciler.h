// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "asop/cache.h"
#include "asop/client.h"
#include "asop/events.h"
#include "asop/kind.h"
#include "asop/reconciler.h"

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

inline const asop::Kind kConfigMap{"v1", "ConfigMap", "configmaps"};
inline const asop::Kind kNamespace{"v1", "Namespace", "namespaces", asop::Kind::Scope::cluster};

// Reconciles one source (its key): a finalizer first; then a copy in every namespace that asks,
// written only when missing or different (a hand edit or delete of a copy is put back), and copies
// in namespaces that stopped asking deleted; when the source is deleted, every copy, then the
// finalizer. Events on the source say what changed.
class ConfigMapSyncReconciler final : public asop::Reconciler {
 public:
  struct Stores {
    const asop::Cache* sources;
    const asop::Cache* copies;
    const asop::Cache* namespaces;
  };
  // Reads and writes go through each reconcile's asop::Client (ReconcileContext::client).
  ConfigMapSyncReconciler(Stores stores, asop::EventRecorder& events);

  boost::asio::awaitable<asop::ReconcileResult> reconcile(
      asop::Request request, const asop::ReconcileContext& context) override;

  // The source a copy's change concerns (for the builder's watches()).
  static std::vector<asop::Request> source_of_copy(const asop::StoreChange& change);

 private:
  boost::asio::awaitable<asop::ReconcileResult> sync(const rapidjson::Document& source,
                                                     asop::Client& client,
                                                     const asop::ReconcileContext& context);
  boost::asio::awaitable<asop::ReconcileResult> clean_up(const rapidjson::Document& source,
                                                         asop::Client& client,
                                                         const asop::ReconcileContext& context);
  boost::asio::awaitable<asop::ReconcileResult> source_gone(asop::Client& client);
  // Removes our finalizer from `source` (as last seen), guarded.
  boost::asio::awaitable<asop::ReconcileResult> remove_finalizer(const rapidjson::Value& source,
                                                                 asop::Client& client,
                                                                 std::string why);
  // Deletes the copies of `source` in namespaces not in `keep`; the namespaces deleted from, or
  // the first error.
  boost::asio::awaitable<asop::Result<std::vector<std::string>>> delete_copies(
      const asop::ObjectKey& source, const std::vector<std::string>& keep, asop::Client& client);

  Stores stores_;
  asop::EventRecorder& events_;
};

}  // namespace configmap_sync
