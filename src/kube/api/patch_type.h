// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

#include "asop/client.h"

namespace kube {

// PatchType is public (asop/client.h).
using asop::PatchType;

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
