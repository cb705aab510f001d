// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

namespace ctrl {

// True when `after` differs from `before` only in `status` and in what the server maintains on
// every write (metadata.resourceVersion, metadata.managedFields): a status write, typically the
// controller's own. Like controller-runtime's GenerationChangedPredicate, but metadata changes a
// reconciler acts on (finalizers, deletionTimestamp, labels, annotations) still count.
bool status_only_change(const rapidjson::Value& before, const rapidjson::Value& after);

}  // namespace ctrl
