// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kube/core/result.h"

namespace kube {

// A List response read without building its DOM: the list's own fields, and each of its items as
// a view of its JSON text in the body. A list of thousands of objects is several megabytes of DOM
// at once; split, each item is parsed on its own and the page never is.
struct ListText {
  std::string kind;         // "DeploymentList"
  std::string api_version;  // "apps/v1"
  std::string resource_version;
  std::string continue_token;
  std::vector<std::string_view> items;  // views into the body; items that are not objects skipped
};

// One pass of a SAX parser over `body` (iterative: deep nesting cannot overflow the stack). Not
// JSON, or not an object at the top, is an error naming `what` and the offset.
Result<ListText> split_list(std::string_view body, std::string_view what);

}  // namespace kube
