// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/ctrl/: where a reader starts: the manager, the controller loop, the reconciler contract,
// the write tracker (read your own writes) and the builder that wires a controller. May use:
// src/asop/, src/ctrl/base/, src/ctrl/object/, src/ctrl/metrics/, src/ctrl/queue/, src/ctrl/cache/,
// src/ctrl/leader/, src/ctrl/events/, src/ctrl/serve/, src/kube/api/, src/kube/core/ (the Rooms
// table in docs/architecture.md).

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ctrl/base/clock.h"
#include "ctrl/cache/informer.h"
#include "ctrl/controller.h"
#include "ctrl/events/event_recorder.h"
#include "ctrl/kind.h"
#include "ctrl/leader/leader_election_config.h"
#include "ctrl/leader/leader_elector.h"
#include "ctrl/metrics/metrics_registry.h"
#include "ctrl/serve/access_reviewer.h"
#include "ctrl/serve/probe_metrics_server.h"
#include "ctrl/serve/request_authorizer.h"
#include "ctrl/serve/serving_cert.h"
#include "kube/api/rest_client.h"

namespace ctrl {

// Wires informers, controllers, leader election, the Event recorder and the probe/metrics servers
// onto one io_context, like controller-runtime's manager (docs/architecture.md, "Manager
// lifecycle"):
//   start servers and informers -> wait for every cache to sync (or exit 1 at the timeout) ->
//   [win the lease] -> start controllers -> run until SIGTERM/SIGINT.
// Shutdown: stop taking work, let in-flight reconciles finish (bounded), flush Events (bounded),
// release the lease (empty holder, so a standby takes over in seconds), stop informers and
// servers; exit 0.
// Crash rather than freeze: a lost lease, or a leader elector that fails or ends, exits 1 at once
// with no further request; any other background coroutine (informer, controller, Event sender,
// servers) that throws or ends on its own starts the graceful shutdown above and exits 1.
class Manager {
 public:
  // How the informers made by informer() list and watch.
  struct CacheOptions {
    CacheOptions() = default;
    std::string ns;  // namespaced kinds are cached in this namespace only; empty: all
    std::int64_t page_size = 500;
    bool stream_lists = true;  // Informer::Options::stream_lists
  };

  struct Options {
    Options() = default;
    CacheOptions cache;
    bool leader_elect = false;
    std::string leader_election_namespace;
    std::string leader_election_id;
    LeaderElectionConfig leader_election;
    std::string metrics_bind_address = ":8080";
    // HTTPS metrics behind TokenReview + SubjectAccessReview (controller-runtime's
    // --metrics-secure) with this certificate (required then; it must outlive the manager).
    bool metrics_secure = false;
    ServingCertificate* metrics_certificate = nullptr;
    RequestAuthorizer::Options metrics_auth;
    std::string health_probe_bind_address = ":8081";
    std::chrono::milliseconds cache_sync_timeout{std::chrono::minutes(2)};
    // SIGTERM and SIGINT start the graceful shutdown (not in a test process: asop::testing).
    bool handle_signals = true;
    std::chrono::milliseconds graceful_shutdown_timeout{std::chrono::seconds(30)};
    // Time given to queued Events at shutdown, after the workers stop, before the release.
    std::chrono::milliseconds event_flush_timeout{std::chrono::seconds(5)};
  };

  // Exit codes of run().
  static constexpr int kExitOk = 0;
  static constexpr int kExitFailure = 1;

  Manager(boost::asio::io_context& io, Options options, std::shared_ptr<kube::RestClient> client,
          MetricsRegistry& metrics, const Clock& clock, Random& random);
  ~Manager();

  // Informers and controllers live as long as the manager; add them before run().
  Informer& add_informer(Informer::Options options);
  // The shared cache, like controller-runtime's cache.GetInformer: the informer of `kind` with
  // this label selector, made on first use with Options::cache (and `transform`, which the first
  // call chooses); later calls with the same kind and selector return the same informer, so a
  // reconciler reading a store and a builder watching it share one list and watch.
  Informer& informer(const Kind& kind, const std::string& label_selector = {},
                     std::function<void(rapidjson::Document&)> transform = nullptr);
  Controller& add_controller(Controller::Options options, Reconciler& reconciler);
  // The REST client the informers use; the builder hands it to its controllers' Clients.
  const std::shared_ptr<kube::RestClient>& client() const { return client_; }
  // The recorder is flushed at shutdown, and a failure of its sender ends the process. It must
  // outlive the manager's run().
  void add_event_recorder(EventRecorder& recorder);
  // Runs `task` from run() until shutdown, supervised like the informers: an exception or an end
  // before shutdown begins ends the process (graceful shutdown, exit 1). `stop` is called when
  // shutdown begins and must make `task` return.
  void add_background_task(std::string name, std::function<boost::asio::awaitable<void>()> task,
                           std::function<void()> stop);

  // A background coroutine died: logs `what` and `why`, then shuts down gracefully and exits 1.
  // For components that run their own coroutines (servers, the Event sender).
  void background_failed(const std::string& what, const std::string& why);

  // Runs the io_context until shutdown; returns the process exit code.
  int run();
  // Asks for a graceful shutdown, as SIGTERM does.
  void request_shutdown();

  // Ends run() at once with kExitFailure, abandoning every coroutine where it is suspended (a
  // lost lease, a dead background coroutine). After that the caller must not destroy objects
  // those coroutines use before exiting: main() ends the process with std::_Exit.
  void abort_run(const std::string& why);
  bool aborted() const { return aborted_; }
  // Why the run failed ("informer \"v1 services\" failed: ..."), empty while all is well.
  const std::string& failure() const { return failure_; }

  // Every informer has delivered its first full list (gates the start of the controllers).
  bool caches_synced() const;
  // Every informer's store is complete and kept current (/readyz): false while one relists.
  bool caches_current() const;
  const std::vector<std::unique_ptr<Controller>>& controllers() const { return controllers_; }
  unsigned short metrics_port() const { return metrics_server_->port(); }
  unsigned short health_port() const { return probe_server_->port(); }

 private:
  struct BackgroundTask {
    std::string name;
    std::function<boost::asio::awaitable<void>()> task;
    std::function<void()> stop;
  };

  boost::asio::awaitable<void> main();
  boost::asio::awaitable<bool> wait_for_cache_sync();
  void start_controllers();
  ProbeMetricsServer::Options metrics_server_options() const;
  boost::asio::awaitable<void> stop_controllers();
  boost::asio::awaitable<void> flush_events();
  // Completion handler for a supervised coroutine; `fatal_at_once` for the leader elector.
  std::function<void(std::exception_ptr)> supervise(std::string what, bool fatal_at_once = false);

  boost::asio::io_context& io_;
  Options options_;
  std::shared_ptr<kube::RestClient> client_;
  MetricsRegistry& metrics_;
  const Clock& clock_;
  Random& random_;
  std::vector<std::unique_ptr<Informer>> informers_;
  std::map<std::string, Informer*> shared_informers_;  // informer(): by path and label selector
  std::vector<std::unique_ptr<Controller>> controllers_;
  std::vector<EventRecorder*> recorders_;
  std::vector<BackgroundTask> tasks_;
  std::unique_ptr<LeaderElector> elector_;
  // Secure metrics only; declared before the server that uses them.
  std::unique_ptr<AccessReviewer> reviewer_;
  std::unique_ptr<RequestAuthorizer> metrics_authorizer_;
  std::unique_ptr<ProbeMetricsServer> metrics_server_;
  std::unique_ptr<ProbeMetricsServer> probe_server_;
  boost::asio::steady_timer shutdown_;          // cancelled to wake main() for shutdown
  boost::asio::steady_timer controllers_done_;  // cancelled when the last controller returns
  int running_controllers_ = 0;
  bool shutdown_requested_ = false;
  bool shutting_down_ = false;  // the shutdown sequence began: coroutines may end now
  bool controllers_started_ = false;
  bool aborted_ = false;
  int exit_code_ = kExitOk;
  std::string failure_;
};

}  // namespace ctrl
