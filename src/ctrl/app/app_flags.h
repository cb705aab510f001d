// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/ctrl/app/: the common main() of an operator: flags, the REST config from a kubeconfig
// or the pod, the client, metrics, the manager, exit codes. May use: src/ctrl/, src/ctrl/base/,
// src/ctrl/metrics/, src/ctrl/events/, src/ctrl/serve/, src/kube/api/, src/kube/config/,
// src/kube/http/, src/kube/core/ (the Rooms table in docs/architecture.md).

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

namespace ctrl {

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

// Parses --name=value, --name value, and -v N; booleans take no separate value. Throws UsageError.
AppFlags parse_app_flags(int argc, char** argv, std::string default_leader_election_id);
// Go duration subset: "15s", "500ms", "1m", "1m30s". Throws UsageError naming `flag`.
std::chrono::milliseconds parse_duration(const std::string& flag, const std::string& value);

}  // namespace ctrl
