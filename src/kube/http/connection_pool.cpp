// SPDX-License-Identifier: Apache-2.0
#include "kube/http/connection_pool.h"

namespace kube {

std::unique_ptr<HttpConnection> ConnectionPool::take() {
  const auto now = std::chrono::steady_clock::now();
  while (!idle_.empty()) {
    auto conn = std::move(idle_.back());
    idle_.pop_back();
    if (conn->is_open() && now - conn->idle_since <= max_idle_time_) return conn;
    conn->close();
  }
  return nullptr;
}

void ConnectionPool::put(std::unique_ptr<HttpConnection> conn) {
  if (!conn || !conn->is_open()) return;
  if (idle_.size() >= max_idle_ || conn->generation != generation_) {
    conn->close();
    return;
  }
  conn->idle_since = std::chrono::steady_clock::now();
  idle_.push_back(std::move(conn));
}

void ConnectionPool::clear() {
  for (auto& conn : idle_) conn->close();
  idle_.clear();
}

void ConnectionPool::retire_all() {
  clear();
  ++generation_;
}

}  // namespace kube
