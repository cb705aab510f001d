// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/kube/config/: RestConfig and where it comes from: kubeconfig, in-cluster, exec
// credential plugins and their child process, token source, impersonation, proxy environment. May
// use: src/kube/core/ (the Rooms table in docs/architecture.md).

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kube/config/in_cluster_config.h"
#include "kube/config/rest_config.h"

namespace kube {

// Where load_rest_config looks, and what it may read; every input is injectable for tests.
struct LoadOptions {
  std::string explicit_path;            // --kubeconfig; when set and missing, an error
  std::string context;                  // --context; overrides current-context
  EnvLookup env = process_env();        // KUBECONFIG, HOME, KUBERNETES_SERVICE_*, POD_NAMESPACE
  std::optional<std::string> home_dir;  // default: $HOME, else the passwd entry
  std::string in_cluster_root = "/";    // prefix of /var/run/secrets/kubernetes.io/serviceaccount
};

// Resolves the config as controller-runtime's config.GetConfig does: --kubeconfig, else KUBECONFIG
// (':'-separated, merged, missing files skipped), else in-cluster, else ~/.kube/config. When
// KUBECONFIG names only missing files, in-cluster is tried before giving up (client-go's deferred
// loader does the same). Throws ConfigError with one line naming the file/context/field.
RestConfig load_rest_config(const LoadOptions& options);

// One kubeconfig file, or several merged as kubectl merges them. File references are made absolute
// against the folder of the file that defined the entry when it is parsed, so merging keeps them
// right. Nothing is read besides the kubeconfig files until resolve().
class Kubeconfig {
 public:
  // Throws ConfigError: missing or unreadable file (names it), YAML error (file and 1-based line),
  // wrong structure, duplicate names within the file.
  static Kubeconfig load_file(const std::string& path);
  // `path` names the text in messages; relative references resolve against its folder.
  static Kubeconfig parse(std::string_view yaml, const std::string& path);

  // Adds the entries of `later` that this config does not define yet: per cluster, user and
  // context name, and for current-context, the first file that sets it wins.
  void merge(const Kubeconfig& later);

  // The RestConfig for `context` (empty: current-context), with CA, client certificate and key
  // loaded and checked. Throws ConfigError.
  RestConfig resolve(const std::string& context = {}) const;

  const std::string& current_context() const { return current_context_; }
  const std::vector<std::string>& files() const { return files_; }

 private:
  struct Cluster {
    std::string server;
    std::string certificate_authority;       // absolute path
    std::string certificate_authority_data;  // base64, decoded at resolve time
    bool insecure_skip_tls_verify = false;
    std::string tls_server_name;
    std::string proxy_url;
    std::vector<std::string> unsupported;  // fields the loader does not implement, with lines
    std::string file;                      // the kubeconfig that defined it
  };
  struct User {
    std::string token;
    std::string token_file;
    std::string client_certificate;
    std::string client_certificate_data;
    std::string client_key;
    std::string client_key_data;
    std::string username;
    std::string password;
    std::optional<ExecConfig> exec;
    Impersonation impersonate;
    std::string auth_provider;  // legacy in-tree provider name; unsupported, named in the error
    std::vector<std::string> unsupported;
    std::string file;
  };
  struct Context {
    std::string cluster;
    std::string user;
    std::string namespace_;
    std::vector<std::string> unsupported;
    std::string file;
  };

  std::string source() const;

  std::vector<std::string> files_;
  std::string current_context_;
  std::map<std::string, Cluster> clusters_;
  std::map<std::string, User> users_;
  std::map<std::string, Context> contexts_;
};

// Helpers shared by the config loaders (kubeconfig, in-cluster, exec plugin output). All throw
// ConfigError whose message starts with `what` (e.g. "client-key /x/y.key for user admin") and
// never contains the material itself.

// The whole file; `what` says which field referenced it.
std::string read_config_file(const std::string& path, const std::string& what);
// Standard base64 with padding (basic auth headers).
std::string encode_base64(const std::string& bytes);
// Decodes standard base64 (whitespace ignored), as kubeconfig *-data fields are encoded.
std::string decode_base64(std::string_view text, const std::string& what);
// At least one X.509 certificate in PEM; every PEM block in the text must be a valid certificate.
void check_certificates_pem(const std::string& pem, const std::string& what);
// A private key in PEM (PKCS#8, PKCS#1 RSA or SEC1 EC).
void check_private_key_pem(const std::string& pem, const std::string& what);
// The key belongs to the first certificate of the chain.
void check_key_matches_certificate(const std::string& cert_pem, const std::string& key_pem,
                                   const std::string& what);

}  // namespace kube
