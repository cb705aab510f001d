// SPDX-License-Identifier: Apache-2.0
#include "ctrl/app/app_flags.h"

#include <cctype>
#include <charconv>
#include <map>
#include <utility>
#include <vector>

#include "kube/core/resource_path.h"

namespace ctrl {
namespace {

int parse_int(const std::string& flag, const std::string& value, int min) {
  int out = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size() || out < min) {
    throw UsageError("invalid value \"" + value + "\" for " + flag +
                     ": want an integer >= " + std::to_string(min));
  }
  return out;
}

bool parse_bool(const std::string& flag, const std::string& value) {
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  throw UsageError("invalid value \"" + value + "\" for " + flag + ": want true or false");
}

// client-go's NewLeaderElector checks, as usage errors rather than an abort later on. The Lease
// holds whole seconds (leaseDurationSeconds), so a sub-second part would be silently dropped.
void validate_leader_election(const AppFlags& f) {
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

void validate_path_segments(const AppFlags& f) {
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

}  // namespace

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

AppFlags parse_app_flags(int argc, char** argv, std::string default_leader_election_id) {
  AppFlags f;
  f.leader_election_id = std::move(default_leader_election_id);
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

}  // namespace ctrl
