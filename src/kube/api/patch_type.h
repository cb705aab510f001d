// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

namespace kube {

// The PATCH flavours the API server accepts, told apart by Content-Type.
enum class PatchType {
  apply,            // server-side apply; needs a field manager
  merge,            // RFC 7386 JSON merge patch
  json,             // RFC 6902 JSON patch (supports "test" for optimistic concurrency)
  strategic_merge,  // built-in types only
};

constexpr std::string_view content_type(PatchType type) {
  switch (type) {
    case PatchType::apply:
      return "application/apply-patch+yaml";  // JSON is valid YAML
    case PatchType::merge:
      return "application/merge-patch+json";
    case PatchType::json:
      return "application/json-patch+json";
    case PatchType::strategic_merge:
      return "application/strategic-merge-patch+json";
  }
  return "application/json";
}

}  // namespace kube
