#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "kube/rest_config.h"

// Exec credential plugins (client.authentication.k8s.io/v1 and v1beta1), the way EKS, GKE and AKS
// kubeconfigs authenticate (aws eks get-token, gke-gcloud-auth-plugin, kubelogin).
//
// Errors: every failure throws kube::ConfigError (config_error.h) with one line that names the
// plugin command and the config source, never the credential or the plugin's stdout. Exceptions are
// the start-up error path; after start-up the transport catches them on re-authentication.
//
// Blocking: running a plugin blocks the calling thread (up to ExecOptions::timeout). That happens
// at start-up and then about once per credential lifetime (15 min to 1 h for the cloud plugins), so
// the single io_context thread accepts a short stall instead of carrying a child-process reactor.

namespace kube {

// What a plugin returned. A client certificate may come instead of, or with, a token.
struct ExecCredential {
  std::string token;
  std::string client_cert_pem;
  std::string client_key_pem;
  // None: valid until the server answers 401 (then ExecCredentialProvider::invalidate()).
  std::optional<std::chrono::system_clock::time_point> expiry;
};

struct ExecOptions {
  std::chrono::milliseconds timeout = std::chrono::seconds(30);
  std::size_t max_output_bytes = 1 << 20;  // a credential is a few KiB; more is a broken plugin
  // Folders searched for a command without a slash; default: the process's PATH.
  std::optional<std::string> search_path;
};

// Parses a plugin's stdout. `expected_api_version` is the kubeconfig's exec.apiVersion, which the
// reply must repeat; `what` starts error messages.
ExecCredential parse_exec_credential(std::string_view json, std::string_view expected_api_version,
                                     const std::string& what);

// An RFC 3339 time ("2024-05-01T10:00:00Z", "2024-05-01T12:00:00.5+02:00"); none when malformed.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text);

// The KUBERNETES_EXEC_INFO value for `config.exec`: apiVersion, kind, spec.interactive=false and,
// with provideClusterInfo, spec.cluster (server, tls-server-name, insecure-skip-tls-verify,
// certificate-authority-data).
std::string exec_info_json(const RestConfig& config);

// Runs `config.exec` once and parses its reply. The command gets its args, the inherited
// environment plus exec.env plus KUBERNETES_EXEC_INFO, stdin from /dev/null; stdout and stderr are
// read with a size bound and a deadline (the process is killed at the deadline). Blocks.
ExecCredential run_exec_plugin(const RestConfig& config, const ExecOptions& options = {});

// Caches a plugin's credential until its expirationTimestamp (none: until invalidate()), as
// client-go's exec authenticator does. Not thread-safe: owned by the one io_context thread.
class ExecCredentialProvider {
 public:
  using Clock = std::function<std::chrono::system_clock::time_point()>;

  // `config.exec` must be set. The clock is injectable so tests step time instead of sleeping.
  explicit ExecCredentialProvider(RestConfig config, Clock clock = &std::chrono::system_clock::now,
                                  ExecOptions options = {});

  // The cached credential, or a fresh one when none is cached or it has expired. Blocks while the
  // plugin runs; throws ConfigError when it fails (nothing stays cached then).
  const ExecCredential& get();

  // Drops the cached credential so the next get() re-runs the plugin; called on a 401.
  void invalidate() { cached_.reset(); }

 private:
  RestConfig config_;
  Clock clock_;
  ExecOptions options_;
  std::optional<ExecCredential> cached_;
};

}  // namespace kube
