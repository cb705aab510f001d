// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kube/config/rest_config.h"

// Exec credential plugins (client.authentication.k8s.io/v1 and v1beta1), the way EKS, GKE and AKS
// kubeconfigs authenticate (aws eks get-token, gke-gcloud-auth-plugin, kubelogin).
//
// Errors: every failure throws kube::ConfigError (config_error.h) with one line that names the
// plugin command and the config source, never the credential or the plugin's stdout. Exceptions are
// the start-up error path; after start-up the transport turns them into failed requests.
//
// Never blocking: the plugin runs as a child process awaited on the io_context (child_process.h),
// so a slow plugin (aws eks get-token, kubelogin: seconds) stalls only the requests that need its
// credential, never lease renewals, watches or probes that still hold a valid one.

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
// environment plus exec.env plus KUBERNETES_EXEC_INFO, stdin from /dev/null and no other inherited
// descriptor; stdout and stderr are read with a size bound and a deadline (the process is killed
// at the deadline). Awaits the child on the calling coroutine's executor.
boost::asio::awaitable<ExecCredential> run_exec_plugin_async(RestConfig config,
                                                             ExecOptions options);

// The same, blocking the calling thread on a private io_context (start-up, tests).
ExecCredential run_exec_plugin(const RestConfig& config, const ExecOptions& options = {});

// When ExecCredentialProvider re-runs its plugin.
struct ExecRefreshPolicy {
  std::chrono::seconds max_refresh_ahead{300};
  // A plugin that keeps returning the same soon-expiring credential is not re-run in a loop.
  std::chrono::seconds min_refresh_interval{10};
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{std::chrono::minutes(5)};
};

// Caches a plugin's credential as client-go's exec authenticator does, without its blocking:
// - One run at a time (single flight): requests that need a credential while a run is going on
//   await that run.
// - A credential with an expirationTimestamp is refreshed ahead of time, in the background, while
//   requests keep using the still-valid one: once half its lifetime is gone, at most
//   max_refresh_ahead before expiry. A request waits for the plugin only when there is no valid
//   credential at all (start-up, expiry, a 401).
// - invalidate(used) after a 401 drops the credential only if it is still the cached one, as
//   client-go's maybeRefreshCreds does: a request that failed with a credential already replaced
//   just retries with the new one.
// - A failed run is retried only after a backoff (initial_backoff doubling to max_backoff); until
//   then a request without a valid credential fails at once with the last error.
// Not thread-safe: owned by the one io_context thread.
class ExecCredentialProvider {
 public:
  using Clock = std::function<std::chrono::system_clock::time_point()>;
  using Credential = std::shared_ptr<const ExecCredential>;

  // `config.exec` must be set. The clock is injectable so tests step time instead of sleeping.
  explicit ExecCredentialProvider(RestConfig config, Clock clock = &std::chrono::system_clock::now,
                                  ExecOptions options = {}, ExecRefreshPolicy policy = {});
  ~ExecCredentialProvider();
  ExecCredentialProvider(const ExecCredentialProvider&) = delete;
  ExecCredentialProvider& operator=(const ExecCredentialProvider&) = delete;

  // A valid cached credential at once (starting a background refresh when it is due), else the
  // result of the one run in flight. Throws ConfigError when that run fails or a failed run's
  // backoff has not elapsed (nothing stays cached then).
  boost::asio::awaitable<Credential> get();

  // The server answered 401 to a request made with `used`: the next get() runs the plugin, unless
  // the cached credential is already a newer one.
  void invalidate(const Credential& used);

  // The credential get() would return without running the plugin, if any (null otherwise).
  Credential cached();
  // Plugin runs started so far, and whether one is going on.
  int runs() const { return runs_; }
  bool running() const;

 private:
  struct Flight;
  void start(const boost::asio::any_io_executor& ex);
  // Takes in the result of a finished run.
  void settle();
  bool usable(std::chrono::system_clock::time_point now) const;

  std::shared_ptr<const RestConfig> config_;
  Clock clock_;
  ExecOptions options_;
  ExecRefreshPolicy policy_;
  Credential cached_;
  std::shared_ptr<Flight> flight_;
  std::chrono::system_clock::time_point refresh_at_{};
  std::chrono::system_clock::time_point retry_at_{};
  std::chrono::milliseconds backoff_{0};
  std::string last_error_;
  // Until a run succeeds the error goes to the caller alone: at start-up it is the one line the
  // operator exits with, and a log line before it would make two.
  bool ever_succeeded_ = false;
  int runs_ = 0;
};

}  // namespace kube
