// SPDX-License-Identifier: Apache-2.0
// appservice-operator: flags and wiring only.
#include <glog/logging.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "appservice/app_service.h"
#include "appservice/cache_projection.h"
#include "appservice/condition_metrics.h"
#include "appservice/desired_state.h"
#include "appservice/reconciler.h"
#include "ctrl/controller.h"
#include "ctrl/events/event_recorder.h"
#include "ctrl/manager.h"
#include "ctrl/metrics/process_metrics.h"
#include "ctrl/metrics/rest_client_metrics.h"
#include "ctrl/object/object_meta.h"
#include "ctrl/serve/serving_cert.h"
#include "ctrl/write_tracker.h"
#include "kube/api/rest_client.h"
#include "kube/config/config_error.h"
#include "kube/config/kubeconfig.h"
#include "kube/config/token_source.h"
#include "kube/core/resource_path.h"
#include "kube/http/http_transport.h"
#include "kube/http/request_metrics.h"

namespace {

constexpr int kExitUsage = 2;

constexpr const char* kUsage = R"(usage: appservice-operator [flags]

Keeps every AppService (app.example.com/v1) backed by an owned Deployment and Service.

  --kubeconfig PATH                 kubeconfig file (else $KUBECONFIG, in-cluster, ~/.kube/config)
  --context NAME                    kubeconfig context (default: current-context)
  --namespace NS                    watch only this namespace (default: all)
  --label-selector SEL              reconcile only AppServices matching SEL (sharding)
  --max-concurrent-reconciles N     parallel reconciles (default 4)
  --leader-elect                    elect a leader with a coordination.k8s.io Lease
  --leader-election-namespace NS    namespace of the Lease (default: the pod's/context's)
  --leader-election-id NAME         name of the Lease (default appservice-operator.app.example.com)
  --leader-elect-lease-duration D   (default 15s)
  --leader-elect-renew-deadline D   (default 10s)
  --leader-elect-retry-period D     (default 2s)
  --metrics-bind-address ADDR       Prometheus /metrics (default :8443 with --metrics-secure,
                                    else :8080; 0 disables)
  --metrics-secure                  serve /metrics over HTTPS, only to bearer tokens allowed to
                                    get /metrics (TokenReview + SubjectAccessReview)
  --metrics-cert-path DIR           certificate directory for secure metrics, reloaded when its
                                    files change (default: a self-signed certificate made at start)
  --metrics-cert-name NAME          certificate file in DIR (default tls.crt)
  --metrics-cert-key NAME           key file in DIR (default tls.key)
  --health-probe-bind-address ADDR  /healthz and /readyz (default :8081, 0 disables)
  --watch-list=BOOL                 fill the caches by streaming lists over a watch
                                    (sendInitialEvents, default true); lists in pages where the
                                    API server does not serve them (before 1.27, or WatchList off)
  --list-page-size N                page size of lists when not streamed (default 500)
  --reconcile-timeout D             end each reconcile's API requests after D; counted in
                                    controller_runtime_reconcile_timeouts_total and retried with
                                    backoff (default 0: none, as controller-runtime)
  --sync-period D                   reconcile every AppService again this often (default 10h,
                                    jittered by +-10%), so a change a watch missed is repaired
  --cache-sync-timeout D            exit 1 if a cache has not synced by then (default 2m)
  -v N                              log verbosity (glog)
  --version, --help
)";

struct Flags {
  std::string kubeconfig;
  std::string context;
  std::string ns;
  std::string label_selector;
  int max_concurrent_reconciles = 4;
  bool leader_elect = false;
  std::string leader_election_namespace;
  std::string leader_election_id = "appservice-operator.app.example.com";
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

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

int parse_int(const std::string& flag, const std::string& value, int min) {
  int out = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size() || out < min) {
    throw UsageError("invalid value \"" + value + "\" for " + flag +
                     ": want an integer >= " + std::to_string(min));
  }
  return out;
}

// Go duration subset: "15s", "500ms", "1m", "1m30s".
std::chrono::milliseconds parse_duration(const std::string& flag, const std::string& value) {
  static const std::map<std::string, double> units = {
      {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
  double total = 0;
  std::size_t i = 0;
  while (i < value.size()) {
    std::size_t start = i;
    while (i < value.size() &&
           (std::isdigit(static_cast<unsigned char>(value[i])) || value[i] == '.')) {
      ++i;
    }
    std::size_t unit_start = i;
    while (i < value.size() && std::isalpha(static_cast<unsigned char>(value[i]))) ++i;
    auto unit = units.find(value.substr(unit_start, i - unit_start));
    if (start == unit_start || unit == units.end()) {
      throw UsageError("invalid duration \"" + value + "\" for " + flag + " (e.g. 15s, 500ms)");
    }
    double number = 0;
    auto [end, ec] = std::from_chars(value.data() + start, value.data() + unit_start, number);
    if (ec != std::errc() || end != value.data() + unit_start) {
      throw UsageError("invalid duration \"" + value + "\" for " + flag + " (e.g. 15s, 500ms)");
    }
    total += number * unit->second;
  }
  if (value.empty() || total < 1 || total > 1e12) {
    throw UsageError("invalid duration \"" + value + "\" for " + flag +
                     ": want 1ms or more, within 30 years");
  }
  return std::chrono::milliseconds(static_cast<long long>(total));
}

bool parse_bool(const std::string& flag, const std::string& value) {
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  throw UsageError("invalid value \"" + value + "\" for " + flag + ": want true or false");
}

// client-go's NewLeaderElector checks, as usage errors rather than an abort later on. The Lease
// holds whole seconds (leaseDurationSeconds), so a sub-second part would be silently dropped.
void validate_leader_election(const Flags& f) {
  if (f.lease_duration.count() % 1000 != 0) {
    throw UsageError(
        "--leader-elect-lease-duration must be whole seconds (the Lease stores "
        "seconds), got " +
        std::to_string(f.lease_duration.count()) + "ms");
  }
  if (f.renew_deadline >= f.lease_duration) {
    throw UsageError("--leader-elect-renew-deadline must be shorter than the lease duration");
  }
  // client-go: renewDeadline > JitterFactor * retryPeriod, JitterFactor 1.2.
  if (f.renew_deadline.count() * 10 <= f.retry_period.count() * 12) {
    throw UsageError(
        "--leader-elect-renew-deadline must be longer than 1.2 x "
        "--leader-elect-retry-period");
  }
}

// The namespace and Lease name become URL path segments: one the API server would decode into
// another path ("..", "a/b", "a%2Fb") is a usage error, not a request refused on every retry.
std::string lease_path_problem(const std::string& ns, const std::string& id) {
  return kube::ResourcePath::from_api_version("coordination.k8s.io/v1", "leases")
      .in_namespace(ns)
      .named(id)
      .invalid_reason(kube::ResourcePath::Target::object);
}

void validate_path_segments(const Flags& f) {
  const std::string ns = kube::ResourcePath::from_api_version("v1", "pods")
                             .in_namespace(f.ns)
                             .invalid_reason(kube::ResourcePath::Target::collection);
  if (!ns.empty()) throw UsageError("--namespace: " + ns);
  // An empty --leader-election-namespace means the config's namespace, checked once it is known.
  const std::string lease = lease_path_problem(
      f.leader_election_namespace.empty() ? "default" : f.leader_election_namespace,
      f.leader_election_id);
  if (!lease.empty())
    throw UsageError("--leader-election-namespace/--leader-election-id: " + lease);
}

// Parses --name=value, --name value, and -v N; booleans take no separate value.
Flags parse_flags(int argc, char** argv) {
  Flags f;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg.rfind("-", 0) != 0) throw UsageError("unexpected argument \"" + arg + "\"");
    std::string name = arg.substr(arg.rfind("--", 0) == 0 ? 2 : 1);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) throw UsageError("flag --" + name + " needs a value");
      return args[++i];
    };
    const std::string flag = "--" + name;
    if (name == "kubeconfig") {
      f.kubeconfig = value();
    } else if (name == "context") {
      f.context = value();
    } else if (name == "namespace") {
      f.ns = value();
    } else if (name == "label-selector") {
      f.label_selector = value();
    } else if (name == "max-concurrent-reconciles") {
      f.max_concurrent_reconciles = parse_int(flag, value(), 1);
    } else if (name == "leader-elect") {
      f.leader_elect = inline_value ? parse_bool(flag, *inline_value) : true;
    } else if (name == "leader-election-namespace") {
      f.leader_election_namespace = value();
    } else if (name == "leader-election-id") {
      f.leader_election_id = value();
    } else if (name == "leader-elect-lease-duration") {
      f.lease_duration = parse_duration(flag, value());
    } else if (name == "leader-elect-renew-deadline") {
      f.renew_deadline = parse_duration(flag, value());
    } else if (name == "leader-elect-retry-period") {
      f.retry_period = parse_duration(flag, value());
    } else if (name == "metrics-bind-address") {
      f.metrics_bind_address = value();
    } else if (name == "metrics-secure") {
      f.metrics_secure = inline_value ? parse_bool(flag, *inline_value) : true;
    } else if (name == "metrics-cert-path") {
      f.metrics_cert_path = value();
    } else if (name == "metrics-cert-name") {
      f.metrics_cert_name = value();
    } else if (name == "metrics-cert-key") {
      f.metrics_cert_key = value();
    } else if (name == "health-probe-bind-address") {
      f.health_probe_bind_address = value();
    } else if (name == "watch-list") {
      f.watch_list = inline_value ? parse_bool(flag, *inline_value) : true;
    } else if (name == "list-page-size") {
      f.list_page_size = parse_int(flag, value(), 1);
    } else if (name == "reconcile-timeout") {
      const std::string v = value();
      f.reconcile_timeout = v == "0" ? std::chrono::milliseconds(0) : parse_duration(flag, v);
    } else if (name == "sync-period") {
      f.sync_period = parse_duration(flag, value());
    } else if (name == "cache-sync-timeout") {
      f.cache_sync_timeout = parse_duration(flag, value());
    } else if (name == "v") {
      f.verbosity = parse_int(flag, value(), 0);
    } else {
      throw UsageError("unknown flag " + flag + " (see --help)");
    }
  }
  validate_leader_election(f);
  if (!f.metrics_cert_path.empty() && !f.metrics_secure) {
    throw UsageError("--metrics-cert-path needs --metrics-secure");
  }
  if (!f.metrics_bind_address) f.metrics_bind_address = f.metrics_secure ? ":8443" : ":8080";
  validate_path_segments(f);
  return f;
}

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

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--version") {
      std::cout << "appservice-operator " << ASOP_VERSION << "\n";
      return 0;
    }
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    }
  }
  Flags flags;
  std::optional<std::chrono::milliseconds> fail_background_after;
  try {
    flags = parse_flags(argc, argv);
    if (const char* after = std::getenv(kFailBackgroundEnv)) {
      fail_background_after = parse_duration(kFailBackgroundEnv, after);
    }
  } catch (const UsageError& e) {
    std::cerr << "appservice-operator: " << e.what() << "\n";
    return kExitUsage;
  }
  FLAGS_logtostderr = true;
  FLAGS_v = flags.verbosity;
  google::InitGoogleLogging(argv[0]);

  kube::RestConfig config;
  boost::asio::io_context io;
  auto requests = std::make_shared<kube::RequestMetrics>();
  std::shared_ptr<kube::RestClient> client;
  try {
    kube::LoadOptions load;
    load.explicit_path = flags.kubeconfig;
    load.context = flags.context;
    config = kube::load_rest_config(load);
    // Fetch the credential now, so an exec plugin missing from the image is a start-up error
    // (exit 2), not a retry loop. The transport then uses this cached one.
    auto tokens = std::make_shared<kube::TokenSource>(config);
    tokens->prime();
    client = std::make_shared<kube::RestClient>(std::make_shared<kube::HttpTransport>(
        io.get_executor(), config, kube::HttpTransport::Options{}, tokens, requests));
  } catch (const kube::ConfigError& e) {
    std::cerr << "appservice-operator: " << e.what() << "\n";
    return kExitUsage;
  }
  ctrl::RealClock clock;
  // Before anything is logged: an unreadable certificate is a one-line start-up error.
  std::unique_ptr<ctrl::ServingCertificate> metrics_cert;
  if (flags.metrics_secure) {
    ctrl::ServingCertificate::Options co;
    co.cert_dir = flags.metrics_cert_path;
    co.cert_name = flags.metrics_cert_name;
    co.key_name = flags.metrics_cert_key;
    try {
      metrics_cert = std::make_unique<ctrl::ServingCertificate>(co, clock);
    } catch (const std::runtime_error& e) {
      std::cerr << "appservice-operator: " << e.what() << "\n";
      return kExitUsage;
    }
  }
  LOG(INFO) << "appservice-operator " << ASOP_VERSION << " using " << config.source
            << " server=" << config.scheme << "://" << config.authority()
            << (flags.ns.empty() ? " namespace=(all)" : " namespace=" + flags.ns);

  ctrl::MetricsRegistry metrics;
  ctrl::register_process_metrics(metrics);
  ctrl::register_rest_client_metrics(metrics, requests);
  ctrl::SeededRandom random;

  ctrl::Manager::Options mo;
  mo.leader_elect = flags.leader_elect;
  mo.leader_election_namespace = flags.leader_election_namespace.empty()
                                     ? config.default_namespace
                                     : flags.leader_election_namespace;
  mo.leader_election_id = flags.leader_election_id;
  mo.leader_election.lease_duration =
      std::chrono::duration_cast<std::chrono::seconds>(flags.lease_duration);
  mo.leader_election.renew_deadline = flags.renew_deadline;
  mo.leader_election.retry_period = flags.retry_period;
  mo.metrics_bind_address = *flags.metrics_bind_address;
  mo.metrics_secure = flags.metrics_secure;
  mo.metrics_certificate = metrics_cert.get();
  mo.health_probe_bind_address = flags.health_probe_bind_address;
  mo.cache_sync_timeout = flags.cache_sync_timeout;
  ctrl::Manager manager(io, mo, client, metrics, clock, random);

  auto informer_for = [&](std::string_view api_version, std::string_view resource,
                          std::string label_selector,
                          std::function<void(rapidjson::Document&)> transform) -> ctrl::Informer& {
    ctrl::Informer::Options o;
    o.collection = kube::ResourcePath::from_api_version(api_version, resource);
    if (!flags.ns.empty()) o.collection = o.collection.in_namespace(flags.ns);
    o.label_selector = std::move(label_selector);
    o.page_size = flags.list_page_size;
    o.stream_lists = flags.watch_list;
    o.transform = std::move(transform);
    return manager.add_informer(o);
  };
  // Children are cached only when labelled as ours: the cache stays small on a busy cluster.
  const std::string ours =
      std::string(appservice::kManagedByLabel) + "=" + std::string(appservice::kManagedBy);
  // Each cache keeps only the fields the reconciler reads (appservice/cache_projection.h).
  auto& apps = informer_for(appservice::kApiVersion, "appservices", flags.label_selector,
                            [](rapidjson::Document& d) { appservice::project_app_service(d); });
  auto& deployments = informer_for("apps/v1", "deployments", ours, [](rapidjson::Document& d) {
    appservice::project_deployment(d);
  });
  auto& services = informer_for("v1", "services", ours,
                                [](rapidjson::Document& d) { appservice::project_service(d); });
  appservice::register_condition_metrics(metrics, apps.store());

  ctrl::EventRecorder::Options eo;
  eo.component = "appservice-operator";
  eo.sweep_every = eo.correlator.window;  // at rest the Event caches empty themselves
  ctrl::EventRecorder events(io.get_executor(), client, eo, clock, &metrics);
  manager.add_event_recorder(events);  // flushed at shutdown, before the Lease is released
  // Read your own writes (KEP-5647): every write of the reconciler is recorded against the cache
  // of what it wrote, and a key is reconciled only once those caches have observed it.
  ctrl::WriteTracker writes;
  for (auto* informer : {&apps, &deployments, &services}) writes.add_informer(*informer);
  appservice::AppServiceReconciler reconciler(
      {&apps.store(), &deployments.store(), &services.store(), &writes}, client, events, clock);
  ctrl::Controller::Options co;
  co.write_tracker = &writes;
  co.name = "appservice";
  co.max_concurrent_reconciles = flags.max_concurrent_reconciles;
  co.resync_period = flags.sync_period;
  co.reconcile_timeout = flags.reconcile_timeout;
  co.resync_store = &apps.store();
  auto& controller = manager.add_controller(co, reconciler);
  apps.add_handler(controller.enqueue_self(ctrl::Controller::Updates::skip_status_only));
  // A deleted AppService's uid never comes back: its Event bookkeeping goes with it.
  apps.add_handler([&events](const ctrl::StoreChange& change) {
    const auto& last = change.new_object ? change.new_object : change.old_object;
    if (change.type == ctrl::StoreChange::Type::deleted && last) {
      events.forget(std::string(ctrl::meta_uid(*last)));
    }
  });
  // Owners outside this process's cache (another shard's) are not ours to reconcile.
  deployments.add_handler(
      controller.enqueue_controller_owner("app.example.com", "AppService", &apps.store()));
  services.add_handler(
      controller.enqueue_controller_owner("app.example.com", "AppService", &apps.store()));

  boost::asio::steady_timer fail_timer(io);
  if (fail_background_after) {
    manager.add_background_task(
        "failure injection",
        [timer = &fail_timer, after = *fail_background_after] { return fail_after(timer, after); },
        [timer = &fail_timer] { timer->cancel(); });
  }

  const int code = manager.run();
  // Aborted (lost lease, dead background coroutine): coroutines are left suspended and refer to
  // the objects above, so exit without unwinding them, as a Go process exits mid-goroutine.
  if (manager.aborted()) std::_Exit(code);
  return code;
}
