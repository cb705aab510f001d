// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/ctrl/object/: objects as JSON: metadata accessors, field masks, compact text,
// managed-fields upgrade, status-only change. May use: nothing else in src/ (the Rooms table in
// docs/architecture.md).

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctrl {

// Read-only accessors for the metadata of any Kubernetes object in JSON. A missing or mistyped
// field reads as empty: objects come from the API server and are not trusted to be well formed.
std::string_view meta_string(const rapidjson::Value& object, const char* field);
std::string_view meta_namespace(const rapidjson::Value& object);
std::string_view meta_name(const rapidjson::Value& object);
std::string_view meta_uid(const rapidjson::Value& object);
std::string_view meta_resource_version(const rapidjson::Value& object);
// metadata.labels[key]; empty when missing.
std::string_view meta_label(const rapidjson::Value& object, std::string_view key);
// metadata.deletionTimestamp is set: the object is being deleted (finalizers hold it).
bool meta_deleting(const rapidjson::Value& object);
// metadata.finalizers; other items skipped.
std::vector<std::string> meta_finalizers(const rapidjson::Value& object);
// The API server deletes the object on the write that returned it (its ShouldDeleteDuringUpdate):
// being deleted, no finalizer left, and no grace period still running (a Pod's kubelet confirms).
bool meta_deleted_by_write(const rapidjson::Value& written);

// A resourceVersion as the unsigned integer it is: Kubernetes 1.35+ guarantees resourceVersions
// are decimal integers that compare in the order the writes happened (KEP-5504). nullopt for an
// empty or any other string (an older or foreign server's opaque value): callers fail open.
std::optional<std::uint64_t> resource_version_number(std::string_view resource_version);

// The cache and work-queue key: "namespace/name", or "name" for cluster-scoped objects
// (client-go's MetaNamespaceKeyFunc).
std::string object_key(const rapidjson::Value& object);
std::string object_key(std::string_view ns, std::string_view name);

// The ownerReference with controller: true, if any.
struct OwnerRef {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
};
std::optional<OwnerRef> controller_owner(const rapidjson::Value& object);

// Drops metadata.managedFields: server-side apply bookkeeping that is often most of an object's
// size and that no controller here reads (controller-runtime's cache does the same).
void strip_managed_fields(rapidjson::Value& object);

// Keeps of each metadata.managedFields entry only who wrote how: manager, operation and (when set)
// subresource, dropping fieldsV1 and the rest. Enough to see that a create's "Update" entry still
// waits to be folded into an apply entry (needs_managed_fields_upgrade). Edits in place, so like
// strip_managed_fields it frees nothing of the document's pool allocator. An Informer transform for
// caches whose readers need that (Informer::Options::transform).
void summarize_managed_fields(rapidjson::Value& object);

}  // namespace ctrl
