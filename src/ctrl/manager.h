#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ctrl/clock.h"
#include "ctrl/controller.h"
#include "ctrl/health_server.h"
#include "ctrl/informer.h"
#include "ctrl/leader_election_config.h"
#include "ctrl/leader_elector.h"
#include "ctrl/metrics_registry.h"
#include "kube/rest_client.h"

namespace ctrl {

// Wires informers, controllers, leader election and the probe/metrics servers onto one
// io_context, like controller-runtime's manager:
//   start servers and informers -> wait for every cache to sync (or exit) -> [win the lease] ->
//   start controllers -> run until SIGTERM/SIGINT, or abort at once on a lost lease.
// Shutdown: stop taking work, let in-flight reconciles finish (bounded), release the lease (empty
// holder, so a standby takes over in seconds), stop informers and servers.
class Manager {
 public:
  struct Options {
    Options() = default;
    bool leader_elect = false;
    std::string leader_election_namespace;
    std::string leader_election_id;
    LeaderElectionConfig leader_election;
    std::string metrics_bind_address = ":8080";
    std::string health_probe_bind_address = ":8081";
    std::chrono::seconds cache_sync_timeout{120};
    std::chrono::seconds graceful_shutdown_timeout{30};
  };

  // Exit codes of run().
  static constexpr int kExitOk = 0;
  static constexpr int kExitFailure = 1;

  Manager(boost::asio::io_context& io, Options options, std::shared_ptr<kube::RestClient> client,
          MetricsRegistry& metrics, const Clock& clock, Random& random);
  ~Manager();

  // Informers and controllers live as long as the manager; add them before run().
  Informer& add_informer(Informer::Options options);
  Controller& add_controller(Controller::Options options, Reconciler& reconciler);

  // Runs the io_context until shutdown; returns the process exit code.
  int run();
  // Asks for a graceful shutdown, as SIGTERM does.
  void request_shutdown();

  // Ends run() at once with kExitFailure, abandoning every coroutine where it is suspended (a
  // lost lease, a dead background coroutine). After that the caller must not destroy objects
  // those coroutines use before exiting: main() ends the process with std::_Exit.
  void abort_run(const std::string& why);
  bool aborted() const { return aborted_; }

  bool caches_synced() const;
  unsigned short metrics_port() const { return metrics_server_->port(); }
  unsigned short health_port() const { return health_server_->port(); }

 private:
  boost::asio::awaitable<void> main();
  boost::asio::awaitable<bool> wait_for_cache_sync();
  void start_controllers();
  boost::asio::awaitable<void> stop_controllers();

  boost::asio::io_context& io_;
  Options options_;
  std::shared_ptr<kube::RestClient> client_;
  MetricsRegistry& metrics_;
  const Clock& clock_;
  Random& random_;
  std::vector<std::unique_ptr<Informer>> informers_;
  std::vector<std::unique_ptr<Controller>> controllers_;
  std::unique_ptr<LeaderElector> elector_;
  std::unique_ptr<HealthServer> metrics_server_;
  std::unique_ptr<HealthServer> health_server_;
  boost::asio::steady_timer shutdown_;          // cancelled to wake main() for shutdown
  boost::asio::steady_timer controllers_done_;  // cancelled when the last controller returns
  int running_controllers_ = 0;
  bool shutdown_requested_ = false;
  bool controllers_started_ = false;
  bool aborted_ = false;
  int exit_code_ = kExitOk;
};

}  // namespace ctrl
