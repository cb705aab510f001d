// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "kube/config/rest_config.h"
#include "kube/http/http_request.h"

namespace kube::testing {

// A config for a plain-http test server on 127.0.0.1:port, with no credentials.
inline RestConfig plain_config(unsigned short port) {
  RestConfig c;
  c.scheme = "http";
  c.host = "127.0.0.1";
  c.port = std::to_string(port);
  return c;
}

inline HttpRequest get(std::string target) {
  HttpRequest r;
  r.target = std::move(target);
  return r;
}

}  // namespace kube::testing
