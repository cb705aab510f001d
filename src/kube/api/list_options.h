// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kube {

// Query parameters of a list (metav1.ListOptions); empty strings and zero are left out.
struct ListOptions {
  // User-declared so this is not an aggregate: GCC 12 miscompiles aggregate temporaries holding
  // strings inside a co_await expression (`co_await f(T{})` frees an SSO pointer).
  ListOptions() = default;

  std::string label_selector;  // "app=x,tier!=db": percent-encoded on the wire
  std::string field_selector;
  std::string resource_version;        // "" (most recent, quorum read), "0" (any, from cache)...
  std::string resource_version_match;  // "NotOlderThan" or "Exact"
  std::int64_t limit = 0;              // page size; 0: no paging
  std::string continue_token;
  std::optional<int> timeout_seconds;
};

}  // namespace kube
