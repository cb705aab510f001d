// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "kube/config/rest_config.h"

namespace kube {

// Reads one environment variable. The loaders take this instead of calling getenv so tests do not
// depend on the machine they run on.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The process environment (std::getenv).
EnvLookup process_env();

// The service account folder under `root` ("/" in a real pod; a fixture folder in tests).
std::string service_account_dir(const std::string& root);

// True when this process looks like it runs in a pod: KUBERNETES_SERVICE_HOST and _PORT are set
// and the service account token exists (client-go's inClusterClientConfig.Possible).
bool in_cluster_possible(const EnvLookup& env, const std::string& root = "/");

// The config of the pod's service account: https://KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT,
// ca.crt as the CA, the token by path (token_file) because bound tokens rotate (about hourly), and
// the namespace from POD_NAMESPACE or the namespace file. Throws ConfigError when the environment
// is incomplete or a file is unreadable or invalid.
RestConfig load_in_cluster_config(const EnvLookup& env, const std::string& root = "/");

}  // namespace kube
