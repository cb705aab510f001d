// SPDX-License-Identifier: Apache-2.0
#include "configmap_sync_reconciler.h"

#include <glog/logging.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <set>
#include <utility>

#include "ctrl/object/object_meta.h"

namespace configmap_sync {
namespace {

std::string to_text(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

const rapidjson::Value* member(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::string label(const rapidjson::Value& object, const char* name) {
  const auto* metadata = member(object, "metadata");
  const auto* labels = metadata ? member(*metadata, "labels") : nullptr;
  const auto* value = labels ? member(*labels, name) : nullptr;
  return value && value->IsString() ? value->GetString() : "";
}

bool being_deleted(const rapidjson::Value& object) {
  const auto* metadata = member(object, "metadata");
  return metadata && member(*metadata, "deletionTimestamp") != nullptr;
}

// The index of our finalizer in metadata.finalizers, or -1.
int finalizer_index(const rapidjson::Value& object) {
  const auto* metadata = member(object, "metadata");
  const auto* finalizers = metadata ? member(*metadata, "finalizers") : nullptr;
  if (!finalizers || !finalizers->IsArray()) return -1;
  for (rapidjson::SizeType i = 0; i < finalizers->Size(); ++i) {
    if ((*finalizers)[i].IsString() && std::string((*finalizers)[i].GetString()) == kFinalizer) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

bool has_finalizers(const rapidjson::Value& object) {
  const auto* metadata = member(object, "metadata");
  const auto* finalizers = metadata ? member(*metadata, "finalizers") : nullptr;
  return finalizers && finalizers->IsArray();
}

// data and binaryData as the copy must have them; a missing map reads as an empty one.
bool same_map(const rapidjson::Value& a, const rapidjson::Value& b, const char* field) {
  static const rapidjson::Value empty(rapidjson::kObjectType);
  const auto* x = member(a, field);
  const auto* y = member(b, field);
  return (x ? *x : empty) == (y ? *y : empty);
}

bool is_copy_of(const rapidjson::Value& copy, const ctrl::Request& source) {
  return label(copy, kCopyOfNamespaceLabel) == source.ns &&
         label(copy, kCopyOfNameLabel) == source.name;
}

// The server-side apply body of the copy of `source` in `ns`: only the fields we own.
rapidjson::Document desired_copy(const rapidjson::Value& source, const std::string& ns) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  rapidjson::Value metadata(rapidjson::kObjectType);
  const std::string name(ctrl::meta_name(source));
  metadata.AddMember("name", rapidjson::Value(name.c_str(), a), a);
  metadata.AddMember("namespace", rapidjson::Value(ns.c_str(), a), a);
  rapidjson::Value labels(rapidjson::kObjectType);
  labels.AddMember(rapidjson::StringRef(kCopyOfNamespaceLabel),
                   rapidjson::Value(std::string(ctrl::meta_namespace(source)).c_str(), a), a);
  labels.AddMember(rapidjson::StringRef(kCopyOfNameLabel), rapidjson::Value(name.c_str(), a), a);
  labels.AddMember("app.kubernetes.io/managed-by", rapidjson::StringRef(kFieldManager), a);
  metadata.AddMember("labels", labels, a);
  d.AddMember("apiVersion", "v1", a);
  d.AddMember("kind", "ConfigMap", a);
  d.AddMember("metadata", metadata, a);
  for (const char* field : {"data", "binaryData"}) {
    rapidjson::Value copy(rapidjson::kObjectType);
    if (const auto* value = member(source, field); value && value->IsObject())
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

ConfigMapSyncReconciler::ConfigMapSyncReconciler(Stores stores,
                                                 std::shared_ptr<kube::RestClient> client,
                                                 ctrl::EventRecorder& events)
    : stores_(stores), client_(std::move(client)), events_(events) {}

std::vector<ctrl::Request> ConfigMapSyncReconciler::source_of_copy(
    const ctrl::StoreChange& change) {
  std::vector<ctrl::Request> out;
  for (const auto* object : {&change.old_object, &change.new_object}) {
    if (!*object) continue;
    ctrl::Request source(label(**object, kCopyOfNamespaceLabel), label(**object, kCopyOfNameLabel));
    if (source.ns.empty() || source.name.empty()) continue;
    if (out.empty() || out.back().key() != source.key()) out.push_back(std::move(source));
  }
  return out;
}

boost::asio::awaitable<ctrl::ReconcileResult> ConfigMapSyncReconciler::reconcile(
    ctrl::Request request, const ctrl::ReconcileContext& context) {
  auto source = stores_.sources->get(request.key());
  if (!source) co_return co_await source_gone(request);
  if (being_deleted(*source)) co_return co_await clean_up(*source, context);
  if (finalizer_index(*source) < 0) {
    // Before any copy exists: a delete from now on waits for the copies to go.
    const std::string rv(ctrl::meta_resource_version(*source));
    const std::string patch =
        has_finalizers(*source)
            ? R"([{"op":"test","path":"/metadata/resourceVersion","value":")" + rv +
                  R"("},{"op":"add","path":"/metadata/finalizers/-","value":")" + kFinalizer +
                  R"("}])"
            : R"([{"op":"test","path":"/metadata/resourceVersion","value":")" + rv +
                  R"("},{"op":"add","path":"/metadata/finalizers","value":[")" + kFinalizer +
                  R"("]}])";
    const auto path = kConfigMap.collection().in_namespace(request.ns).named(request.name);
    auto patched = co_await client_->patch(path, kube::PatchType::json, kube::JsonBody(patch));
    if (!patched)
      co_return ctrl::ReconcileResult::error("add finalizer: " + patched.error().describe());
    co_return ctrl::ReconcileResult::done();  // the update brings the key back
  }
  co_return co_await sync(*source, context);
}

boost::asio::awaitable<ctrl::ReconcileResult> ConfigMapSyncReconciler::sync(
    const rapidjson::Document& source, const ctrl::ReconcileContext& context) {
  const ctrl::Request key(std::string(ctrl::meta_namespace(source)),
                          std::string(ctrl::meta_name(source)));
  std::vector<std::string> targets;
  stores_.namespaces->for_each([&](const rapidjson::Document& ns) {
    const std::string name(ctrl::meta_name(ns));
    if (name != key.ns && !being_deleted(ns)) targets.push_back(name);
  });
  std::sort(targets.begin(), targets.end());
  std::vector<std::string> written;
  for (const auto& ns : targets) {
    auto copy = stores_.copies->get(ctrl::object_key(ns, key.name));
    if (copy && is_copy_of(*copy, key) && same_map(*copy, source, "data") &&
        same_map(*copy, source, "binaryData") &&
        label(*copy, "app.kubernetes.io/managed-by") == kFieldManager) {
      continue;  // steady state: no write
    }
    const auto desired = desired_copy(source, ns);
    const auto path = kConfigMap.collection().in_namespace(ns).named(key.name);
    if (!copy) {
      // Never take over a ConfigMap that is not a copy: create only if nothing has the name.
      auto created = co_await client_->apply_create(path, desired, kFieldManager);
      if (created) {
        written.push_back(ns);
        continue;
      }
      if (!created.error().is(kube::Errc::conflict) &&
          !created.error().is(kube::Errc::already_exists)) {
        co_return ctrl::ReconcileResult::error("create copy in " + ns + ": " +
                                               created.error().describe());
      }
      auto existing = co_await client_->get(path);
      if (!existing) {
        co_return ctrl::ReconcileResult::error("read " + ns + "/" + key.name + ": " +
                                               existing.error().describe());
      }
      if (!existing->body || !is_copy_of(*existing->body, key)) {
        record(
            source, ctrl::EventType::warning, "CopyConflict",
            "namespace " + ns + " has a ConfigMap " + key.name + " that is not a copy: left alone");
        continue;
      }
    } else if (!is_copy_of(*copy, key)) {
      continue;  // a copy of another source of the same name: first come, first served
    }
    auto applied = co_await client_->apply(path, kube::JsonBody(to_text(desired)), kFieldManager);
    if (!applied) {
      co_return ctrl::ReconcileResult::error("write copy in " + ns + ": " +
                                             applied.error().describe());
    }
    written.push_back(ns);
  }
  auto removed = co_await delete_copies(key, targets);
  if (!removed) co_return ctrl::ReconcileResult::error(removed.error().describe());
  if (!written.empty()) {
    LOG(INFO) << context.log_prefix << " copied to " << joined(written);
    record(source, ctrl::EventType::normal, "Synced", "copied to " + joined(written));
  }
  if (!removed->empty()) {
    LOG(INFO) << context.log_prefix << " removed copies from " << joined(*removed);
    record(source, ctrl::EventType::normal, "CopiesRemoved",
           "removed from namespaces that no longer ask: " + joined(*removed));
  }
  co_return ctrl::ReconcileResult::done();
}

boost::asio::awaitable<ctrl::ReconcileResult> ConfigMapSyncReconciler::clean_up(
    const rapidjson::Document& source, const ctrl::ReconcileContext& context) {
  const int index = finalizer_index(source);
  if (index < 0) co_return ctrl::ReconcileResult::done();
  const ctrl::Request key(std::string(ctrl::meta_namespace(source)),
                          std::string(ctrl::meta_name(source)));
  const std::vector<std::string> keep_none;  // no temporaries in co_await (GCC 12)
  auto removed = co_await delete_copies(key, keep_none);
  if (!removed) co_return ctrl::ReconcileResult::error(removed.error().describe());
  LOG(INFO) << context.log_prefix << " source deleted: removed " << removed->size() << " copies";
  record(source, ctrl::EventType::normal, "CopiesDeleted",
         "source deleted: removed " + std::to_string(removed->size()) + " copies");
  const auto path = kConfigMap.collection().in_namespace(key.ns).named(key.name);
  co_return co_await remove_finalizer(path, index);
}

boost::asio::awaitable<ctrl::ReconcileResult> ConfigMapSyncReconciler::source_gone(
    const ctrl::Request& request) {
  const std::vector<std::string> keep_none;
  auto removed = co_await delete_copies(request, keep_none);
  if (!removed) co_return ctrl::ReconcileResult::error(removed.error().describe());
  // Not in the cache but maybe still there: its source label was taken off. Then our finalizer
  // must not stay behind, or deleting it would wait for us forever.
  const auto path = kConfigMap.collection().in_namespace(request.ns).named(request.name);
  auto got = co_await client_->get(path);
  if (!got) {
    if (got.error().is(kube::Errc::not_found)) co_return ctrl::ReconcileResult::done();
    co_return ctrl::ReconcileResult::error("read source: " + got.error().describe());
  }
  if (!got->body || label(*got->body, kSourceLabel) == "true")
    co_return ctrl::ReconcileResult::done();
  const int index = finalizer_index(*got->body);
  if (index < 0) co_return ctrl::ReconcileResult::done();
  co_return co_await remove_finalizer(path, index);
}

boost::asio::awaitable<ctrl::ReconcileResult> ConfigMapSyncReconciler::remove_finalizer(
    const kube::ResourcePath& source, int index) {
  // Only our own entry goes: the test op fails (and the key is retried) if the list moved.
  const std::string at = "/metadata/finalizers/" + std::to_string(index);
  const std::string patch = R"([{"op":"test","path":")" + at + R"(","value":")" + kFinalizer +
                            R"("},{"op":"remove","path":")" + at + R"("}])";
  auto patched = co_await client_->patch(source, kube::PatchType::json, kube::JsonBody(patch));
  if (!patched && !patched.error().is(kube::Errc::not_found)) {
    co_return ctrl::ReconcileResult::error("remove finalizer: " + patched.error().describe());
  }
  co_return ctrl::ReconcileResult::done();
}

boost::asio::awaitable<kube::Result<std::vector<std::string>>>
ConfigMapSyncReconciler::delete_copies(const ctrl::Request& source,
                                       const std::vector<std::string>& keep) {
  std::vector<std::string> doomed;
  stores_.copies->for_each([&](const rapidjson::Document& copy) {
    const std::string ns(ctrl::meta_namespace(copy));
    if (is_copy_of(copy, source) && std::find(keep.begin(), keep.end(), ns) == keep.end()) {
      doomed.push_back(ns);
    }
  });
  std::sort(doomed.begin(), doomed.end());
  for (const auto& ns : doomed) {
    const auto path = kConfigMap.collection().in_namespace(ns).named(source.name);
    auto deleted = co_await client_->delete_(path);
    if (!deleted && !deleted.error().is(kube::Errc::not_found))
      co_return std::move(deleted).error();
  }
  co_return doomed;
}

void ConfigMapSyncReconciler::record(const rapidjson::Document& source, ctrl::EventType type,
                                     std::string reason, std::string message) {
  events_.record(ctrl::ObjectReference("v1", "ConfigMap", std::string(ctrl::meta_namespace(source)),
                                       std::string(ctrl::meta_name(source)),
                                       std::string(ctrl::meta_uid(source))),
                 type, std::move(reason), std::move(message));
}

}  // namespace configmap_sync
