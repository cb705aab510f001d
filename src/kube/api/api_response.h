// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <memory>
#include <utility>

namespace kube {

// A successful (2xx) REST response. `body` is never null: an empty body is a Null document. Shared
// so a cache can keep the object without copying it.
struct ApiResponse {
  // Not an aggregate: see ListOptions (GCC 12 co_await temporaries).
  ApiResponse() = default;
  ApiResponse(int s, std::shared_ptr<rapidjson::Document> b) : status(s), body(std::move(b)) {}

  int status = 0;
  std::shared_ptr<rapidjson::Document> body;
};

}  // namespace kube
