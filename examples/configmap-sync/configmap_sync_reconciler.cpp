// SPDX-License-Identifier: Apache-2.0
#include "configmap_sync_reconciler.h"

#include <glog/logging.h>

#include <algorithm>
#include <set>
#include <utility>

#include "asop/finalizers.h"
#include "asop/object.h"

namespace configmap_sync {
namespace {

// data and binaryData as the copy must have them; a missing map reads as an empty one.
bool same_map(const rapidjson::Value& a, const rapidjson::Value& b, const char* field) {
  static const rapidjson::Value empty(rapidjson::kObjectType);
  const auto* x = asop::json::member(&a, field);
  const auto* y = asop::json::member(&b, field);
  return (x ? *x : empty) == (y ? *y : empty);
}

bool is_copy_of(const rapidjson::Value& copy, const asop::Request& source) {
  return asop::meta_label(copy, kCopyOfNamespaceLabel) == source.ns &&
         asop::meta_label(copy, kCopyOfNameLabel) == source.name;
}

// The server-side apply body of the copy of `source` in `ns`: only the fields we own.
rapidjson::Document desired_copy(const rapidjson::Value& source, const std::string& ns) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  rapidjson::Value metadata(rapidjson::kObjectType);
  const std::string name(asop::meta_name(source));
  metadata.AddMember("name", rapidjson::Value(name.c_str(), a), a);
  metadata.AddMember("namespace", rapidjson::Value(ns.c_str(), a), a);
  rapidjson::Value labels(rapidjson::kObjectType);
  labels.AddMember(rapidjson::StringRef(kCopyOfNamespaceLabel),
                   rapidjson::Value(std::string(asop::meta_namespace(source)).c_str(), a), a);
  labels.AddMember(rapidjson::StringRef(kCopyOfNameLabel), rapidjson::Value(name.c_str(), a), a);
  labels.AddMember("app.kubernetes.io/managed-by", rapidjson::StringRef(kFieldManager), a);
  metadata.AddMember("labels", labels, a);
  d.AddMember("apiVersion", "v1", a);
  d.AddMember("kind", "ConfigMap", a);
  d.AddMember("metadata", metadata, a);
  for (const char* field : {"data", "binaryData"}) {
    rapidjson::Value copy(rapidjson::kObjectType);
    if (const auto* value = asop::json::member(&source, field); value && value->IsObject())
      copy.CopyFrom(*value, a);
    d.AddMember(rapidjson::StringRef(field), copy, a);
  }
  return d;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

ConfigMapSyncReconciler::ConfigMapSyncReconciler(Stores stores, asop::EventRecorder& events)
    : stores_(stores), events_(events) {}

std::vector<asop::Request> ConfigMapSyncReconciler::source_of_copy(
    const asop::StoreChange& change) {
  std::vector<asop::Request> out;
  for (const auto* object : {&change.old_object, &change.new_object}) {
    if (!*object) continue;
    asop::Request source(std::string(asop::meta_label(**object, kCopyOfNamespaceLabel)),
                         std::string(asop::meta_label(**object, kCopyOfNameLabel)));
    if (source.ns.empty() || source.name.empty()) continue;
    if (out.empty() || out.back().key() != source.key()) out.push_back(std::move(source));
  }
  return out;
}

boost::asio::awaitable<asop::ReconcileResult> ConfigMapSyncReconciler::reconcile(
    asop::Request request, const asop::ReconcileContext& context) {
  asop::Client& client = *context.client;
  auto source = client.get(*stores_.sources, request);
  if (!source) co_return co_await source_gone(client);
  switch (asop::finalizer_step(*source, kFinalizer)) {
    case asop::FinalizerStep::add: {
      // Before any copy exists: a delete from now on waits for the copies to go.
      const auto path = kConfigMap.collection().in_namespace(request.ns).named(request.name);
      auto patched = co_await client.add_finalizer(path, *source, kFinalizer);
      if (!patched) co_return asop::ReconcileResult::failed("add finalizer", patched.error());
      co_return asop::ReconcileResult::done();  // the update brings the key back
    }
    case asop::FinalizerStep::clean_up:
      co_return co_await clean_up(*source, client, context);
    case asop::FinalizerStep::nothing:
      co_return asop::ReconcileResult::done();
    case asop::FinalizerStep::apply:
      break;
  }
  co_return co_await sync(*source, client, context);
}

boost::asio::awaitable<asop::ReconcileResult> ConfigMapSyncReconciler::sync(
    const rapidjson::Document& source, asop::Client& client,
    const asop::ReconcileContext& context) {
  const asop::Request key(std::string(asop::meta_namespace(source)),
                          std::string(asop::meta_name(source)));
  std::vector<std::string> targets;
  stores_.namespaces->for_each([&](const rapidjson::Document& ns) {
    const std::string name(asop::meta_name(ns));
    if (name != key.ns && !asop::meta_deleting(ns)) targets.push_back(name);
  });
  std::sort(targets.begin(), targets.end());
  std::vector<std::string> written;
  for (const auto& ns : targets) {
    auto copy = stores_.copies->get(asop::object_key(ns, key.name));
    if (copy && is_copy_of(*copy, key) && same_map(*copy, source, "data") &&
        same_map(*copy, source, "binaryData") &&
        asop::meta_label(*copy, "app.kubernetes.io/managed-by") == kFieldManager) {
      continue;  // steady state: no write
    }
    const auto desired = desired_copy(source, ns);
    const auto path = kConfigMap.collection().in_namespace(ns).named(key.name);
    if (!copy) {
      // Never take over a ConfigMap that is not a copy: create only if nothing has the name.
      auto created = co_await client.apply_create(path, desired, kFieldManager,
                                                  "no copy in " + ns + ": creating it");
      if (created) {
        written.push_back(ns);
        continue;
      }
      if (!created.error().is(asop::Errc::conflict) &&
          !created.error().is(asop::Errc::already_exists)) {
        co_return asop::ReconcileResult::error("create copy in " + ns + ": " +
                                               created.error().describe());
      }
      auto existing = co_await client.get_live(path);
      if (!existing) {
        co_return asop::ReconcileResult::error("read " + ns + "/" + key.name + ": " +
                                               existing.error().describe());
      }
      if (!existing->body || !is_copy_of(*existing->body, key)) {
        events_.record(
            kConfigMap, source, asop::EventType::warning, "CopyConflict",
            "namespace " + ns + " has a ConfigMap " + key.name + " that is not a copy: left alone");
        continue;
      }
    } else if (!is_copy_of(*copy, key)) {
      continue;  // a copy of another source of the same name: first come, first served
    }
    auto applied = co_await client.apply(path, asop::JsonBody(desired), kFieldManager,
                                         "the copy in " + ns + " differs from its source");
    if (!applied) {
      co_return asop::ReconcileResult::error("write copy in " + ns + ": " +
                                             applied.error().describe());
    }
    written.push_back(ns);
  }
  auto removed = co_await delete_copies(key, targets, client);
  if (!removed) co_return asop::ReconcileResult::error(removed.error().describe());
  if (!written.empty()) {
    LOG(INFO) << context.log_prefix << " copied to " << joined(written);
    events_.record(kConfigMap, source, asop::EventType::normal, "Synced",
                   "copied to " + joined(written));
  }
  if (!removed->empty()) {
    LOG(INFO) << context.log_prefix << " removed copies from " << joined(*removed);
    events_.record(kConfigMap, source, asop::EventType::normal, "CopiesRemoved",
                   "removed from namespaces that no longer ask: " + joined(*removed));
  }
  co_return asop::ReconcileResult::done();
}

boost::asio::awaitable<asop::ReconcileResult> ConfigMapSyncReconciler::clean_up(
    const rapidjson::Document& source, asop::Client& client,
    const asop::ReconcileContext& context) {
  const std::vector<std::string> keep_none;  // no temporaries in co_await (GCC 12)
  auto removed = co_await delete_copies(client.key(), keep_none, client);
  if (!removed) co_return asop::ReconcileResult::error(removed.error().describe());
  LOG(INFO) << context.log_prefix << " source deleted: removed " << removed->size() << " copies";
  events_.record(kConfigMap, source, asop::EventType::normal, "CopiesDeleted",
                 "source deleted: removed " + std::to_string(removed->size()) + " copies");
  co_return co_await remove_finalizer(source, client, "source deleted, copies gone");
}

boost::asio::awaitable<asop::ReconcileResult> ConfigMapSyncReconciler::source_gone(
    asop::Client& client) {
  const std::vector<std::string> keep_none;
  auto removed = co_await delete_copies(client.key(), keep_none, client);
  if (!removed) co_return asop::ReconcileResult::error(removed.error().describe());
  // Not in the cache but maybe still there: its source label was taken off. Then our finalizer
  // must not stay behind, or deleting it would wait for us forever.
  const auto path = kConfigMap.collection().in_namespace(client.key().ns).named(client.key().name);
  auto got = co_await client.get_live(path);
  if (!got) {
    if (got.error().is(asop::Errc::not_found)) co_return asop::ReconcileResult::done();
    co_return asop::ReconcileResult::error("read source: " + got.error().describe());
  }
  if (!got->body || asop::meta_label(*got->body, kSourceLabel) == "true")
    co_return asop::ReconcileResult::done();
  co_return co_await remove_finalizer(*got->body, client, "no longer a source");
}

boost::asio::awaitable<asop::ReconcileResult> ConfigMapSyncReconciler::remove_finalizer(
    const rapidjson::Value& source, asop::Client& client, std::string why) {
  // Only our own entry goes: the guard fails (and the key is retried) if the list moved.
  const auto path = kConfigMap.collection()
                        .in_namespace(asop::meta_namespace(source))
                        .named(asop::meta_name(source));
  auto patched = co_await client.remove_finalizer(path, source, kFinalizer, std::move(why));
  if (!patched && !patched.error().is(asop::Errc::not_found)) {
    co_return asop::ReconcileResult::failed("remove finalizer", patched.error());
  }
  co_return asop::ReconcileResult::done();
}

boost::asio::awaitable<asop::Result<std::vector<std::string>>>
ConfigMapSyncReconciler::delete_copies(const asop::ObjectKey& source,
                                       const std::vector<std::string>& keep, asop::Client& client) {
  std::vector<std::string> doomed;
  stores_.copies->for_each([&](const rapidjson::Document& copy) {
    const std::string ns(asop::meta_namespace(copy));
    if (is_copy_of(copy, source) && std::find(keep.begin(), keep.end(), ns) == keep.end()) {
      doomed.push_back(ns);
    }
  });
  std::sort(doomed.begin(), doomed.end());
  for (const auto& ns : doomed) {
    const auto path = kConfigMap.collection().in_namespace(ns).named(source.name);
    const asop::DeleteOptions options;
    auto deleted = co_await client.remove(
        path, options, "its source is gone or " + ns + " no longer asks for a copy");
    if (!deleted && !deleted.error().is(asop::Errc::not_found))
      co_return std::move(deleted).error();
  }
  co_return doomed;
}

}  // namespace configmap_sync
