#pragma once

#include <rapidjson/document.h>

#include <memory>

namespace kube {

// A successful (2xx) REST response. `body` is never null: an empty body is a Null document. Shared
// so a cache can keep the object without copying it.
struct ApiResponse {
  int status = 0;
  std::shared_ptr<rapidjson::Document> body;
};

}  // namespace kube
