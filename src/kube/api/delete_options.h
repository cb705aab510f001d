// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kube {

// Body of a delete (metav1.DeleteOptions).
struct DeleteOptions {
  // Not an aggregate: see ListOptions (GCC 12 co_await temporaries).
  DeleteOptions() = default;

  std::string propagation_policy;  // "Foreground", "Background", "Orphan"; empty: server default
  // Preconditions: the delete fails with 409 Conflict unless the object still has these.
  std::string precondition_uid;
  std::string precondition_resource_version;
  std::optional<std::int64_t> grace_period_seconds;
  bool dry_run = false;
};

}  // namespace kube
