// SPDX-License-Identifier: Apache-2.0
#include "ctrl/app/app.h"

#include <glog/logging.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "ctrl/metrics/process_metrics.h"
#include "ctrl/metrics/rest_client_metrics.h"
#include "kube/config/config_error.h"
#include "kube/config/kubeconfig.h"
#include "kube/config/token_source.h"
#include "kube/http/http_transport.h"

namespace ctrl {
namespace {

// Test hook: with ASOP_TEST_FAIL_BACKGROUND_AFTER=D in the environment, a background task throws
// D after start, so the manager's supervision (exit 1, a log line naming the task, the graceful
// shutdown) is proven through the binary (test/e2e/operator_lifecycle_test.sh). Not a flag: no
// user needs it.
constexpr const char* kFailBackgroundEnv = "ASOP_TEST_FAIL_BACKGROUND_AFTER";

boost::asio::awaitable<void> fail_after(boost::asio::steady_timer* timer,
                                        std::chrono::milliseconds delay) {
  timer->expires_after(delay);
  auto [ec] = co_await timer->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  if (ec) co_return;  // cancelled at shutdown
  throw std::runtime_error(std::string("injected by ") + kFailBackgroundEnv);
}

}  // namespace

App::App(Options options)
    : options_(std::move(options)),
      requests_(std::make_shared<kube::RequestMetrics>()),
      fail_timer_(io_) {}

App::~App() = default;

std::optional<int> App::init(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--version") {
      std::cout << options_.name << " " << options_.version << "\n";
      return 0;
    }
    if (arg == "--help" || arg == "-h") {
      std::cout << options_.usage;
      return 0;
    }
  }
  try {
    flags_ = parse_app_flags(argc, argv, options_.leader_election_id);
    if (const char* after = std::getenv(kFailBackgroundEnv)) {
      fail_background_after_ = parse_duration(kFailBackgroundEnv, after);
    }
  } catch (const UsageError& e) {
    std::cerr << options_.name << ": " << e.what() << "\n";
    return kExitUsage;
  }
  FLAGS_logtostderr = true;
  FLAGS_v = flags_.verbosity;
  // Once per process: a test process runs several Apps.
  if (!google::IsGoogleLoggingInitialized()) google::InitGoogleLogging(argv[0]);

  try {
    kube::LoadOptions load;
    load.explicit_path = flags_.kubeconfig;
    load.context = flags_.context;
    config_ = kube::load_rest_config(load);
    // Fetch the credential now, so an exec plugin missing from the image is a start-up error
    // (exit 2), not a retry loop. The transport then uses this cached one.
    auto tokens = std::make_shared<kube::TokenSource>(config_);
    tokens->prime();
    kube::HttpTransport::Options transport;
    transport.user_agent = options_.name + "/" + options_.version;
    client_ = std::make_shared<kube::RestClient>(std::make_shared<kube::HttpTransport>(
        io_.get_executor(), config_, transport, tokens, requests_));
  } catch (const kube::ConfigError& e) {
    std::cerr << options_.name << ": " << e.what() << "\n";
    return kExitUsage;
  }
  // Before anything is logged: an unreadable certificate is a one-line start-up error.
  if (flags_.metrics_secure) {
    ServingCertificate::Options co;
    co.cert_dir = flags_.metrics_cert_path;
    co.cert_name = flags_.metrics_cert_name;
    co.key_name = flags_.metrics_cert_key;
    try {
      metrics_cert_ = std::make_unique<ServingCertificate>(co, *clock_);
    } catch (const std::runtime_error& e) {
      std::cerr << options_.name << ": " << e.what() << "\n";
      return kExitUsage;
    }
  }
  LOG(INFO) << options_.name << " " << options_.version << " using " << config_.source
            << " server=" << config_.scheme << "://" << config_.authority()
            << (flags_.ns.empty() ? " namespace=(all)" : " namespace=" + flags_.ns);

  register_process_metrics(metrics_);
  register_rest_client_metrics(metrics_, requests_);

  Manager::Options mo;
  mo.cache.ns = flags_.ns;
  mo.cache.page_size = flags_.list_page_size;
  mo.cache.stream_lists = flags_.watch_list;
  mo.leader_elect = flags_.leader_elect;
  mo.leader_election_namespace = flags_.leader_election_namespace.empty()
                                     ? config_.default_namespace
                                     : flags_.leader_election_namespace;
  mo.leader_election_id = flags_.leader_election_id;
  mo.leader_election.lease_duration =
      std::chrono::duration_cast<std::chrono::seconds>(flags_.lease_duration);
  mo.leader_election.renew_deadline = flags_.renew_deadline;
  mo.leader_election.retry_period = flags_.retry_period;
  mo.metrics_bind_address = *flags_.metrics_bind_address;
  mo.metrics_secure = flags_.metrics_secure;
  mo.metrics_certificate = metrics_cert_.get();
  mo.health_probe_bind_address = flags_.health_probe_bind_address;
  mo.cache_sync_timeout = flags_.cache_sync_timeout;
  mo.handle_signals = handle_signals_;
  manager_ = std::make_unique<Manager>(io_, mo, client_, metrics_, *clock_, random_);
  return std::nullopt;
}

void App::set_test_hooks(TestHooks hooks) {
  CHECK(!manager_) << "App::set_test_hooks() after init()";
  if (hooks.clock) clock_ = hooks.clock;
  handle_signals_ = hooks.handle_signals;
}

EventRecorder& App::events() {
  if (!events_) {
    EventRecorder::Options eo;
    eo.component = options_.name;
    eo.sweep_every = eo.correlator.window;  // at rest the Event caches empty themselves
    events_ = std::make_unique<EventRecorder>(io_.get_executor(), client_, eo, *clock_, &metrics_);
    manager_->add_event_recorder(*events_);  // flushed at shutdown, before the Lease is released
  }
  return *events_;
}

ControllerBuilder App::controller(std::string name) {
  Controller::Options co;
  co.name = std::move(name);
  co.max_concurrent_reconciles = flags_.max_concurrent_reconciles;
  co.resync_period = flags_.sync_period;
  co.reconcile_timeout = flags_.reconcile_timeout;
  return ControllerBuilder(*manager_, co);
}

int App::run() {
  if (fail_background_after_) {
    manager_->add_background_task(
        "failure injection",
        [timer = &fail_timer_, after = *fail_background_after_] {
          return fail_after(timer, after);
        },
        [timer = &fail_timer_] { timer->cancel(); });
  }
  const int code = manager_->run();
  if (manager_->aborted()) std::_Exit(code);
  return code;
}

}  // namespace ctrl
