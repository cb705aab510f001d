// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kube/http/http_connection.h"

namespace kube {

// Idle keep-alive connections to one API server. Single-threaded (one io_context), so no locks.
// The most recently used connection is handed out first: it is the least likely to have been
// closed by the server's idle timeout.
class ConnectionPool {
 public:
  ConnectionPool(std::size_t max_idle, std::chrono::milliseconds max_idle_time)
      : max_idle_(max_idle), max_idle_time_(max_idle_time) {}

  // An idle connection, or null; connections idle for longer than max_idle_time are closed.
  std::unique_ptr<HttpConnection> take();
  // Keeps `conn` for reuse, or closes it when the pool is full.
  void put(std::unique_ptr<HttpConnection> conn);
  std::size_t idle() const { return idle_.size(); }
  // Closes every idle connection (shutdown, or the server is known to have restarted).
  void clear();
  // Closes every idle connection and refuses those in use when they come back: the client
  // certificate changed, and connections made with the old one must not be reused.
  void retire_all();
  // Stamp for a new connection (HttpConnection::generation).
  std::uint64_t generation() const { return generation_; }

 private:
  std::size_t max_idle_;
  std::chrono::milliseconds max_idle_time_;
  std::vector<std::unique_ptr<HttpConnection>> idle_;
  std::uint64_t generation_ = 0;
};

}  // namespace kube
