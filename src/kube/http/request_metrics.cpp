// SPDX-License-Identifier: Apache-2.0
#include "kube/http/request_metrics.h"

namespace kube {

void RequestMetrics::record(std::string_view code, std::string_view method, std::string_view host) {
  ++counts_[{std::string(code), std::string(method), std::string(host)}];
}

void RequestMetrics::record(int http_status, std::string_view method, std::string_view host) {
  record(http_status > 0 ? std::to_string(http_status) : std::string("<error>"), method, host);
}

std::vector<RequestMetrics::Sample> RequestMetrics::snapshot() const {
  std::vector<Sample> out;
  out.reserve(counts_.size());
  for (const auto& [key, n] : counts_) {
    out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), n});
  }
  return out;
}

std::uint64_t RequestMetrics::count(std::string_view code, std::string_view method,
                                    std::string_view host) const {
  auto it =
      counts_.find(std::make_tuple(std::string(code), std::string(method), std::string(host)));
  return it == counts_.end() ? 0 : it->second;
}

}  // namespace kube
