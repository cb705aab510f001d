// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/ctrl/serve/: the probe and metrics server, its TokenReview/SubjectAccessReview
// authorizer, serving certificate, bind address. May use: src/ctrl/base/, src/ctrl/metrics/,
// src/kube/api/, src/kube/core/ (the Rooms table in docs/architecture.md).

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "ctrl/base/clock.h"
#include "ctrl/metrics/metrics_registry.h"
#include "ctrl/serve/request_authorizer.h"

namespace boost::asio::ssl {
class context;
}

namespace ctrl {

// The server of the probes and of /metrics (the manager runs one for each bind address): plain
// HTTP on the event loop (Beast), one coroutine per connection:
//   /healthz  200 "ok" while the event loop is live: a ticker stamps a heartbeat every
//             heartbeat_interval, and a heartbeat older than stall_threshold fails the check (500)
//             so the kubelet restarts a process whose loop is blocked or starved.
//   /readyz   200 once every readiness check passes (e.g. caches synced); 503 listing those that
//             fail.
//   /metrics  the registry in the Prometheus text format (404 when constructed without one); with
//             a metrics_authorizer, only for requests it allows (else 401, 403, 429 or 500).
// With tls_context it serves HTTPS only (controller-runtime's secure metrics).
// /healthz/<name> and /readyz/<name> run one check, as controller-runtime's probe handlers do.
// Keep-alive; small header and body limits; deadlines on reading a request and writing a
// response, so a slow or idle client cannot hold a connection for long; and a client that holds
// every connection slot cannot lock the kubelet out: a new connection evicts the oldest one that
// waits for a request.
class ProbeMetricsServer {
 public:
  struct Options {
    Options() = default;  // not an aggregate: GCC 12 co_await temporaries (kube/list_options.h)

    // See parse_bind_address: ":8081", "127.0.0.1:0", "0" disables the server.
    std::string bind_address = ":8081";
    std::chrono::milliseconds heartbeat_interval{std::chrono::seconds(1)};
    // Several heartbeat intervals, or a healthy loop would fail between two ticks.
    std::chrono::milliseconds stall_threshold{std::chrono::seconds(10)};
    // Time for the next request on a connection to arrive whole (idle keep-alive included).
    std::chrono::milliseconds read_timeout{std::chrono::seconds(10)};
    std::chrono::milliseconds write_timeout{std::chrono::seconds(10)};
    std::size_t max_header_bytes = 8 * 1024;
    std::size_t max_body_bytes = 1024;
    // The first byte and all headers of a request (keep-alive idle time included).
    std::chrono::milliseconds header_timeout{std::chrono::seconds(5)};
    // Past either cap, a new connection takes the place of the oldest one waiting for a request.
    std::size_t max_connections = 64;
    std::size_t max_connections_per_peer = 32;
    // HTTPS: every connection is TLS with the context this returns when it is accepted (called
    // per connection, so a rotated certificate is picked up). Empty: plain HTTP.
    std::function<std::shared_ptr<boost::asio::ssl::context>()> tls_context;
    std::chrono::milliseconds handshake_timeout{std::chrono::seconds(5)};
    // Asked before /metrics is served; must outlive the server. Null: /metrics is open.
    RequestAuthorizer* metrics_authorizer = nullptr;
  };
  // A named check: true when healthy or ready. Exceptions count as failure.
  using Check = std::function<bool()>;

  // `clock` measures the heartbeat's age (tests inject a FakeClock); `metrics` may be null. Both
  // must outlive the server's use of them, which ends at stop().
  ProbeMetricsServer(boost::asio::any_io_executor ex, Options options, const Clock& clock,
                     const MetricsRegistry* metrics);
  ~ProbeMetricsServer();
  ProbeMetricsServer(const ProbeMetricsServer&) = delete;
  ProbeMetricsServer& operator=(const ProbeMetricsServer&) = delete;

  void add_healthz_check(std::string name, Check check);
  void add_readyz_check(std::string name, Check check);
  // Called if the accept loop or the heartbeat dies (an exception) before stop(), with why; the
  // manager then shuts the process down rather than run on without probes or metrics.
  void on_failure(std::function<void(const std::string&)> handler);

  // Binds and starts serving and the heartbeat. Start-up errors throw: std::invalid_argument for
  // a malformed address, boost::system::system_error when the address cannot be bound (in use).
  // Does nothing when the address is "0".
  void start();
  // Closes the listener and every connection; no check or handler runs afterwards. Idempotent.
  void stop();

  bool enabled() const;
  // The bound port (useful with port 0); 0 before start() or when disabled.
  unsigned short port() const;
  std::size_t open_connections() const;
  Clock::TimePoint last_heartbeat() const;

 private:
  struct Core;
  std::shared_ptr<Core> core_;
};

}  // namespace ctrl
