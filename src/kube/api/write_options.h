// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kube {

// Query parameters of create, update and patch.
struct WriteOptions {
  // Not an aggregate: see ListOptions (GCC 12 co_await temporaries).
  WriteOptions() = default;

  std::string field_manager;  // required for server-side apply
  bool force = false;         // apply only: take ownership of conflicting fields
  bool dry_run = false;       // dryRun=All
};

}  // namespace kube
