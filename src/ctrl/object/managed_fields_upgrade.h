// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <string_view>

namespace ctrl {

// client-go's csaupgrade.UpgradeManagedFieldsPatch. An object first written with a create or
// update (managedFields operation "Update") and later with server-side apply under the same manager
// name has two owners as far as the API server is concerned, so a field dropped from the applied
// configuration is never removed: the "Update" entry still owns it. This builds the JSON patch that
// folds that manager's "Update" entries (main resource, not subresources) into its "Apply" entry
// (or turns the first into it), so that the next apply owns, and can remove, every field. The patch
// starts with a resourceVersion test, so it is refused (409/422) if the object changed since it was
// read. Returns nothing when there is no such "Update" entry (already migrated).
std::optional<std::string> upgrade_managed_fields_patch(const rapidjson::Value& object,
                                                        std::string_view manager);

// Whether `object` has an "Update" entry of `manager` on the main resource, that is, whether
// upgrade_managed_fields_patch would fold something. Reads only manager, operation and subresource,
// so it answers the same for the whole object and for a cached one whose managedFields were
// summarized (summarize_managed_fields in object_meta.h).
bool needs_managed_fields_upgrade(const rapidjson::Value& object, std::string_view manager);

}  // namespace ctrl
