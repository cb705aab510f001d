// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "ctrl/app/app_flags.h"
#include "ctrl/base/clock.h"
#include "ctrl/builder.h"
#include "ctrl/events/event_recorder.h"
#include "ctrl/manager.h"
#include "ctrl/metrics/metrics_registry.h"
#include "ctrl/serve/serving_cert.h"
#include "kube/api/rest_client.h"
#include "kube/config/rest_config.h"
#include "kube/http/request_metrics.h"

namespace ctrl {

// The main() every operator on this runtime shares, so its own main() is only its controllers:
//
//   int main(int argc, char** argv) {
//     ctrl::App app({"my-operator", "0.1.0", kUsage, "my-operator.example.com"});
//     if (auto exit_code = app.init(argc, argv)) return *exit_code;
//     auto& things = app.manager().informer(kThing);
//     MyReconciler reconciler(things.store(), app.client(), app.events());
//     app.controller("thing").for_kind(kThing, things).complete(reconciler);
//     return app.run();
//   }
//
// init(): the flags (AppFlags), glog, the REST config (--kubeconfig, $KUBECONFIG, in-cluster,
// ~/.kube/config) and its credential, the client, the metrics registry with the process and REST
// client families, the manager with leader election, probes and metrics from the flags. A usage
// or configuration error is one line on stderr, "NAME: why", and exit code 2; --help and
// --version print and exit 0. run(): the manager until SIGTERM/SIGINT (exit 0) or a failure
// (exit 1); see Manager for the lifecycle.
class App {
 public:
  struct Options {
    Options() = default;
    Options(std::string name_, std::string version_, std::string usage_,
            std::string leader_election_id_)
        : name(std::move(name_)),
          version(std::move(version_)),
          usage(std::move(usage_)),
          leader_election_id(std::move(leader_election_id_)) {}
    std::string name;     // the program: message prefix, --version, the Events' component
    std::string version;  // --version and the start-up log line
    std::string usage;    // --help
    std::string leader_election_id;  // the default of --leader-election-id
  };

  static constexpr int kExitUsage = 2;

  explicit App(Options options);
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Everything before the controllers; the exit code when the process must end now.
  std::optional<int> init(int argc, char** argv);

  const AppFlags& flags() const { return flags_; }
  boost::asio::io_context& io() { return io_; }
  Manager& manager() { return *manager_; }
  const std::shared_ptr<kube::RestClient>& client() const { return client_; }
  MetricsRegistry& metrics() { return metrics_; }
  const Clock& clock() const { return clock_; }
  const kube::RestConfig& config() const { return config_; }
  // The Event recorder (component: the program's name), made on first use and flushed at shutdown
  // before the Lease is released.
  EventRecorder& events();
  // A controller for the manager with the flags' --max-concurrent-reconciles, --sync-period and
  // --reconcile-timeout.
  ControllerBuilder controller(std::string name);

  // Runs the manager until shutdown and returns the process exit code. A run that was aborted (a
  // lost Lease, a dead background coroutine) ends the process here, without unwinding coroutines
  // that are left suspended on the objects they use, as a Go process exits mid-goroutine.
  int run();

 private:
  Options options_;
  AppFlags flags_;
  std::optional<std::chrono::milliseconds> fail_background_after_;
  kube::RestConfig config_;
  boost::asio::io_context io_;
  std::shared_ptr<kube::RequestMetrics> requests_;
  std::shared_ptr<kube::RestClient> client_;
  RealClock clock_;
  std::unique_ptr<ServingCertificate> metrics_cert_;
  MetricsRegistry metrics_;
  SeededRandom random_;
  std::unique_ptr<Manager> manager_;
  std::unique_ptr<EventRecorder> events_;
  boost::asio::steady_timer fail_timer_;
};

}  // namespace ctrl
