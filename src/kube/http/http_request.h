// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/beast/http/verb.hpp>
#include <chrono>
#include <optional>
#include <string>

namespace kube {

// One request to the API server, before authentication and transport headers are added.
struct HttpRequest {
  // Not an aggregate: see ListOptions (GCC 12 co_await temporaries).
  HttpRequest() = default;

  boost::beast::http::verb method = boost::beast::http::verb::get;
  std::string target;  // path and query, without the server's base path: "/api/v1/pods?limit=5"
  std::string content_type;  // empty when there is no body
  std::string body;
  // The caller's deadline (a reconcile's): no attempt starts after it, and the one in flight is
  // cut there (its connection closed), as a Go context cancels a request. Unset: only the
  // transport's request_timeout bounds each attempt.
  std::optional<std::chrono::steady_clock::time_point> deadline;

  // GET, HEAD, PUT and DELETE may be sent twice with the same effect, so a request that died on a
  // stale keep-alive connection before any response byte may be retried (as Go's net/http does).
  bool idempotent() const {
    using boost::beast::http::verb;
    return method == verb::get || method == verb::head || method == verb::put ||
           method == verb::delete_;
  }
};

}  // namespace kube
