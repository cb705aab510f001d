// SPDX-License-Identifier: Apache-2.0
#pragma once

// Public API (docs/library.md): the main() every operator on this runtime shares, so its own
// main() is only its caches and controllers:
//
//   int main(int argc, char** argv) {
//     asop::App app({"my-operator", "0.1.0", kUsage, "my-operator.example.com"});
//     if (auto exit_code = app.init(argc, argv)) return *exit_code;
//     auto& things = app.informer(kThing);
//     MyReconciler reconciler(things.store(), app.events());
//     app.controller("thing").for_kind(kThing, things).complete(reconciler);
//     return app.run();
//   }
//
// init(): the flags (AppFlags), glog, the REST config (--kubeconfig, $KUBECONFIG, in-cluster,
// ~/.kube/config) and its credential, the client, the metrics registry with the process and REST
// client families, the manager with leader election, probes and metrics from the flags. A usage
// or configuration error is one line on stderr, "NAME: why", and exit code 2; --help and
// --version print and exit 0. run(): until SIGTERM/SIGINT (exit 0) or a failure (exit 1): the
// caches sync, the Lease is won (with --leader-elect), then the controllers start.

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "asop/builder.h"
#include "asop/cache.h"
#include "asop/events.h"
#include "asop/kind.h"

namespace asop {

namespace testing {
class TestApp;
}

// The flags every operator built with App takes (controller-runtime's names where they exist;
// docs/library.md lists them).
struct AppFlags {
  std::string kubeconfig;
  std::string context;
  std::string ns;
  std::string label_selector;
  int max_concurrent_reconciles = 4;
  bool leader_elect = false;
  std::string leader_election_namespace;
  std::string leader_election_id;  // App::Options::leader_election_id unless given
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  std::optional<std::string> metrics_bind_address;  // default by metrics_secure
  bool metrics_secure = false;
  std::string metrics_cert_path;
  std::string metrics_cert_name = "tls.crt";
  std::string metrics_cert_key = "tls.key";
  std::string health_probe_bind_address = ":8081";
  bool watch_list = true;
  int list_page_size = 500;
  std::chrono::milliseconds sync_period{10 * 3600 * 1000};
  std::chrono::milliseconds reconcile_timeout{0};
  std::chrono::milliseconds cache_sync_timeout{2 * 60 * 1000};
  int verbosity = 0;
};

// A flag the command line got wrong: one line for stderr, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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
    std::string name;     // the program: message prefix, --version, User-Agent, Events' source
    std::string version;  // --version, User-Agent and the start-up log line
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

  const AppFlags& flags() const;
  // The shared cache (controller-runtime's cache.GetInformer): the informer of `kind` with this
  // label selector, made on first use; the same kind and selector give the same informer, so a
  // reconciler reading its store and a builder watching it share one list and watch. It strips
  // metadata.managedFields from what it keeps.
  Informer& informer(const Kind& kind, const std::string& label_selector = {});
  // The Event recorder (source: the program's name), flushed at shutdown.
  EventRecorder& events();
  // A controller with the flags' --max-concurrent-reconciles, --sync-period and
  // --reconcile-timeout.
  ControllerBuilder controller(std::string name);

  // Runs until shutdown and returns the process exit code.
  int run();

  struct Impl;

 private:
  friend class testing::TestApp;  // the test kit runs an App on its own clock (asop/testing/)
  std::unique_ptr<Impl> impl_;
};

}  // namespace asop
