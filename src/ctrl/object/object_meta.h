// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/ctrl/object/: objects as JSON: metadata accessors, field masks, compact text,
// managed-fields upgrade, status-only change. May use: src/asop/, src/kube/core/ (the Rooms table
// in docs/architecture.md).

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "asop/object.h"

namespace ctrl {

// The accessors, object keys and OwnerRef are public (asop/object.h).
using asop::controller_owner;
using asop::meta_deleting;
using asop::meta_finalizers;
using asop::meta_generation;
using asop::meta_label;
using asop::meta_name;
using asop::meta_namespace;
using asop::meta_resource_version;
using asop::meta_string;
using asop::meta_uid;
using asop::object_key;
using asop::OwnerRef;

// The API server deletes the object on the write that returned it (its ShouldDeleteDuringUpdate):
// being deleted, no finalizer left, and no grace period still running (a Pod's kubelet confirms).
bool meta_deleted_by_write(const rapidjson::Value& written);

// A resourceVersion as the unsigned integer it is: Kubernetes 1.35+ guarantees resourceVersions
// are decimal integers that compare in the order the writes happened (KEP-5504). nullopt for an
// empty or any other string (an older or foreign server's opaque value): callers fail open.
std::optional<std::uint64_t> resource_version_number(std::string_view resource_version);

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
