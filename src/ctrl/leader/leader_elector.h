// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/ctrl/leader/: Lease leader election: the elector, its pure state machine, the Lease
// record and config. May use: src/ctrl/base/, src/ctrl/metrics/, src/kube/api/, src/kube/core/ (the
// Rooms table in docs/architecture.md).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <string>

#include "ctrl/base/clock.h"
#include "ctrl/leader/leader_election_config.h"
#include "ctrl/leader/leader_elector_state.h"
#include "ctrl/metrics/gauge.h"
#include "ctrl/metrics/metrics_registry.h"
#include "kube/api/rest_client.h"
#include "kube/core/resource_path.h"

namespace ctrl {

// Leader election on a coordination.k8s.io/v1 Lease, client-go style: the I/O half of
// LeaderElectorState. Every retry period it reads the Lease (creating it when missing), decides,
// and writes with the read resourceVersion as a precondition, so of two candidates writing at
// once exactly one succeeds and the other sees a 409 and simply tries again next period. A leader
// that has not renewed within the renew deadline has lost: on_stopped_leading runs (the manager
// exits non-zero) and run() returns. Single-threaded like the rest of the runtime.
class LeaderElector {
 public:
  struct Options {
    Options() = default;  // not an aggregate: GCC 12 co_await temporaries (kube/list_options.h)

    std::string lease_namespace;
    std::string lease_name;
    std::string identity;  // empty: default_identity()
    LeaderElectionConfig config;
  };
  using Callback = std::function<void()>;

  // `metrics` may be null; otherwise leader_election_master_status{name=<lease name>} is kept at
  // 1 while leading and 0 otherwise. `clock`, `random` and `metrics` must outlive the elector.
  LeaderElector(boost::asio::any_io_executor ex, std::shared_ptr<kube::RestClient> client,
                Options options, const Clock& clock, Random& random, MetricsRegistry* metrics);
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Called on the event loop when we become leader, and when we lose the lease (not on stop() or
  // release(): those are asked for). Set before run().
  void on_started_leading(Callback cb) { on_started_ = std::move(cb); }
  void on_stopped_leading(Callback cb) { on_stopped_ = std::move(cb); }

  // Tries to acquire, then renews, until stop() or until the lease is lost. API and network
  // failures are logged and retried; they never throw. Once per elector.
  boost::asio::awaitable<void> run();
  // Ends run() without touching the Lease (after a request in flight completes): to the others
  // this looks like a crash, and they take over once the lease expires.
  void stop();
  // Graceful shutdown (client-go's ReleaseOnCancel): stop(), then, if the Lease names us, write an
  // empty holder with a 1 s duration so a standby takes over at its next retry instead of waiting
  // for the lease to expire. True when the Lease no longer names us.
  boost::asio::awaitable<bool> release();

  bool is_leader() const { return state_.leading(); }
  const std::string& identity() const { return state_.identity(); }
  // "namespace/name" of the Lease, for logs.
  const std::string& lease_key() const { return key_; }

  // controller-runtime's default: the hostname, "_", and a random UUID, so two processes on one
  // host (or a restarted pod reusing its name) never share an identity.
  static std::string default_identity(Random& random);

 private:
  boost::asio::awaitable<void> loop();
  boost::asio::awaitable<void> try_acquire_or_renew();
  boost::asio::awaitable<void> watch_renew_deadline();
  void became_leader();
  void lose(const std::string& reason);
  void set_gauge(bool leading);
  Clock::Duration next_wait();

  boost::asio::any_io_executor ex_;
  std::shared_ptr<kube::RestClient> client_;
  Options options_;
  const Clock& clock_;
  Random& random_;
  Gauge* gauge_ = nullptr;
  kube::ResourcePath collection_;
  kube::ResourcePath lease_;
  std::string key_;
  LeaderElectorState state_;
  Callback on_started_;
  Callback on_stopped_;
  boost::asio::steady_timer retry_timer_;
  boost::asio::steady_timer deadline_timer_;
  bool started_ = false;
  bool stopping_ = false;
  bool lost_ = false;
  bool done_ = false;
};

}  // namespace ctrl
