// SPDX-License-Identifier: Apache-2.0
#include "kube/config/in_cluster_config.h"

#include <arpa/inet.h>
#include <glog/logging.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "kube/config/config_error.h"
#include "kube/config/kubeconfig.h"
#include "kube/core/text.h"

namespace kube {
namespace {

namespace fs = std::filesystem;

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

std::string non_empty(const EnvLookup& env, const char* name) {
  const auto v = env(name);
  return v ? *v : std::string();
}

}  // namespace

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

std::string service_account_dir(const std::string& root) {
  return (fs::path(root.empty() ? "/" : root) / "var/run/secrets/kubernetes.io/serviceaccount")
      .lexically_normal()
      .string();
}

bool in_cluster_possible(const EnvLookup& env, const std::string& root) {
  return !non_empty(env, "KUBERNETES_SERVICE_HOST").empty() &&
         !non_empty(env, "KUBERNETES_SERVICE_PORT").empty() &&
         exists(service_account_dir(root) + "/token");
}

RestConfig load_in_cluster_config(const EnvLookup& env, const std::string& root) {
  std::string host = non_empty(env, "KUBERNETES_SERVICE_HOST");
  const std::string port = non_empty(env, "KUBERNETES_SERVICE_PORT");
  if (host.empty() || port.empty()) {
    throw ConfigError(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  }
  // The host is a bare IPv6 address on IPv6 clusters (client-go joins it with net.JoinHostPort).
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.find(':') != std::string::npos) {
    in6_addr addr{};
    if (inet_pton(AF_INET6, host.c_str(), &addr) != 1) {
      throw ConfigError("in-cluster config: KUBERNETES_SERVICE_HOST " + host +
                        " is not a valid host");
    }
  }
  if (port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      std::stoi(port) < 1 || std::stoi(port) > 65535) {
    throw ConfigError("in-cluster config: KUBERNETES_SERVICE_PORT " + port +
                      " is not a valid port");
  }

  const std::string dir = service_account_dir(root);
  RestConfig rc;
  rc.scheme = "https";
  rc.host = host;
  rc.port = port;
  rc.in_cluster = true;
  rc.source = "in-cluster service account " + dir;

  // Read once so a missing mount fails now; TokenSource re-reads the file as the kubelet rotates
  // it.
  const std::string token_path = dir + "/token";
  const std::string token_what = "in-cluster service account token " + token_path;
  if (trim(read_config_file(token_path, token_what)).empty()) {
    throw ConfigError(token_what + ": file is empty");
  }
  rc.token_file = token_path;

  const std::string ca_path = dir + "/ca.crt";
  if (exists(ca_path)) {
    const std::string what = "in-cluster CA " + ca_path;
    rc.ca_pem = read_config_file(ca_path, what);
    check_certificates_pem(rc.ca_pem, what);
  } else {
    // client-go logs and carries on with the system roots; so do we.
    LOG(WARNING) << "in-cluster CA " << ca_path << " does not exist; using the system trust store";
  }

  // POD_NAMESPACE first, as client-go's inClusterClientConfig.Namespace does.
  if (std::string ns = non_empty(env, "POD_NAMESPACE"); !ns.empty()) {
    rc.default_namespace = ns;
  } else if (const std::string ns_path = dir + "/namespace"; exists(ns_path)) {
    ns = trim(read_config_file(ns_path, "in-cluster namespace file " + ns_path));
    if (!ns.empty()) rc.default_namespace = ns;
  }
  return rc;
}

}  // namespace kube
