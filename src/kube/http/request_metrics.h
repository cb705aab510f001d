// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace kube {

// Counts HTTP requests to API servers for rest_client_requests_total{code,method,host}. Plain
// counters on the single io_context thread; the ctrl layer renders a snapshot as Prometheus text.
class RequestMetrics {
 public:
  struct Sample {
    std::string code;  // "200", "404", or "<error>" when no response arrived (as client-go)
    std::string method;
    std::string host;
    std::uint64_t count = 0;
  };

  void record(std::string_view code, std::string_view method, std::string_view host);
  void record(int http_status, std::string_view method, std::string_view host);
  // Every (code, method, host) seen so far, sorted by those labels.
  std::vector<Sample> snapshot() const;
  std::uint64_t count(std::string_view code, std::string_view method, std::string_view host) const;

 private:
  std::map<std::tuple<std::string, std::string, std::string>, std::uint64_t, std::less<>> counts_;
};

}  // namespace kube
