// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kube/config/impersonation.h"

namespace kube {

// An exec credential plugin as a kubeconfig user names it (client.authentication.k8s.io).
struct ExecConfig {
  std::string api_version;  // client.authentication.k8s.io/v1 or v1beta1
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string install_hint;
  bool provide_cluster_info = false;
  std::string interactive_mode;  // Never, IfAvailable, Always
};

// An HTTP proxy the connection tunnels through with CONNECT: kubeconfig proxy-url, else
// HTTPS_PROXY/HTTP_PROXY unless NO_PROXY exempts the server.
struct HttpProxy {
  std::string host;  // name or IP (IPv6 without brackets)
  std::string port;
  std::string authorization;  // "Basic ..." from the URL's user info: a credential, never logged
  std::string source;         // "proxy-url", "HTTPS_PROXY", ... for messages
};

// Everything needed to reach one API server, resolved from a kubeconfig or the in-cluster layout.
// File references are kept as paths where the credential may rotate (token file); certificate and
// key material is loaded into memory (PEM) at resolution time so errors surface at start-up.
struct RestConfig {
  // Server.
  std::string scheme = "https";  // https or http
  std::string host;              // name, IPv4, or IPv6 without brackets
  std::string port;              // always set: defaults to 443 / 80
  std::string base_path;         // path prefix from the server URL, without trailing slash
  std::string ca_pem;            // empty: system trust store
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;  // SNI and hostname to verify; empty: host
  std::optional<HttpProxy> proxy;

  // Credentials: at most one kind is used, in this order: client cert, token, token file, exec,
  // basic. A client certificate may be combined with a bearer token, as client-go allows.
  std::string client_cert_pem;
  std::string client_key_pem;
  // Set when the PEM above came from a file: re-read when the file changes (certificate rotation).
  std::string client_cert_file;
  std::string client_key_file;
  std::string token;
  std::string token_file;  // re-read when it changes
  std::string username;
  std::string password;
  std::optional<ExecConfig> exec;
  Impersonation impersonate;  // sent as Impersonate-* headers on every request

  // Where this config came from, for messages ("kubeconfig /root/.kube/config context kind").
  std::string source;
  std::string context_name;
  std::string default_namespace = "default";
  bool in_cluster = false;

  // host:port as used in URLs and metrics labels (IPv6 bracketed).
  std::string authority() const {
    return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
  }
};

}  // namespace kube
