// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "asop/app.h"
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

// The runtime's App behind asop::App (asop/app.h, which documents init() and run()), with what the
// AppService operator's main() uses beyond the public API: the manager (informers with a
// transform), the metrics registry, the clock, the REST client and config.
class App {
 public:
  using Options = asop::App::Options;

  static constexpr int kExitUsage = asop::App::kExitUsage;

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
  const Clock& clock() const { return *clock_; }
  const kube::RequestMetrics& requests() const { return *requests_; }
  const kube::RestConfig& config() const { return config_; }
  // The Event recorder (component: the program's name), made on first use and flushed at shutdown
  // before the Lease is released.
  EventRecorder& events();
  // A controller for the manager with the flags' --max-concurrent-reconciles, --sync-period and
  // --reconcile-timeout.
  ControllerBuilder controller(std::string name);

  // What the test kit (src/testing/) changes before init(): the clock every wait follows, and
  // whether SIGTERM/SIGINT stop the manager (not in a test process that runs several Apps).
  struct TestHooks {
    const Clock* clock = nullptr;
    bool handle_signals = true;
  };
  void set_test_hooks(TestHooks hooks);

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
  RealClock real_clock_;
  const Clock* clock_ = &real_clock_;
  bool handle_signals_ = true;
  std::unique_ptr<ServingCertificate> metrics_cert_;
  MetricsRegistry metrics_;
  SeededRandom random_;
  std::unique_ptr<Manager> manager_;
  std::unique_ptr<EventRecorder> events_;
  boost::asio::steady_timer fail_timer_;
};

}  // namespace ctrl
