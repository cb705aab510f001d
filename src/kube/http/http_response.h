// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace kube {

// A complete response. Any status is a response; turning non-2xx into an ApiError is the REST
// client's job, since only it knows which statuses mean success for a verb.
struct HttpResponse {
  // Not an aggregate: see ListOptions (GCC 12 co_await temporaries).
  HttpResponse() = default;

  int status = 0;
  std::string body;
  std::string content_type;
  std::string retry_after;  // raw Retry-After header, empty when absent
};

}  // namespace kube
