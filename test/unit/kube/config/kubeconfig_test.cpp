// SPDX-License-Identifier: Apache-2.0
#include "kube/config/kubeconfig.h"

#include <stdlib.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "kube/config/config_error.h"
#include "kube/config/in_cluster_config.h"
#include "kube/config/proxy_env.h"
#include "kube/config/token_source.h"
#include "support/source_dir.h"

namespace {

namespace fs = std::filesystem;
using kube::ConfigError;
using kube::Kubeconfig;
using kube::LoadOptions;
using kube::RestConfig;

const std::string kFixtures = kube::testing::source_dir() + "/test/unit/kube/fixtures";

std::string fixture(const std::string& rel) {
  return kFixtures + "/" + rel;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

kube::EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// Options that see nothing of the real machine: no environment, an empty home, no service account.
LoadOptions isolated(std::map<std::string, std::string> env = {}) {
  LoadOptions o;
  o.env = env_of(std::move(env));
  o.home_dir = fixture("no-such-home");
  o.in_cluster_root = fixture("no-such-root");
  return o;
}

const std::map<std::string, std::string> kInClusterEnv = {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                                          {"KUBERNETES_SERVICE_PORT", "443"}};

// The ConfigError message of f(); the test fails when nothing is thrown.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("expected a ConfigError");
  return {};
}

// Every message is one line and carries no secret from the fixtures.
void check_clean(const std::string& message) {
  INFO(message);
  CHECK(message.find('\n') == std::string::npos);
  for (const char* secret :
       {"sup3r-secret-token", "hunter2-secret", "test-token-abc123", "gcp-secret-token",
        "a-secret-token", "b-secret-token", "pa55word-in-url", "BEGIN", "MII"}) {
    CHECK(message.find(secret) == std::string::npos);
  }
}

RestConfig main_context(const std::string& context) {
  LoadOptions o = isolated();
  o.explicit_path = fixture("kubeconfig.yaml");
  o.context = context;
  return kube::load_rest_config(o);
}

std::string refs_error(const std::string& context) {
  const std::string msg =
      error_of([&] { Kubeconfig::load_file(fixture("errors/refs.yaml")).resolve(context); });
  check_clean(msg);
  return msg;
}

// A scratch folder removed at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "asop-kubeconfig-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& content) const {
    const std::string p = path + "/" + name;
    std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
    return p;
  }
};

}  // namespace

// ---- Fields. ----

TEST_CASE("current-context: token, CA file, path prefix, tls-server-name, namespace",
          "[kubeconfig]") {
  const RestConfig rc = main_context("");
  CHECK(rc.context_name == "token");
  CHECK(rc.scheme == "https");
  CHECK(rc.host == "api.example.com");
  CHECK(rc.port == "6443");
  CHECK(rc.base_path == "/prefix");
  CHECK(rc.authority() == "api.example.com:6443");
  CHECK(rc.tls_server_name == "kubernetes.internal");
  CHECK_FALSE(rc.insecure_skip_tls_verify);
  // certificate-authority: pki/ca.crt is relative to the kubeconfig's folder, not the cwd.
  CHECK(rc.ca_pem == slurp(fixture("pki/ca.crt")));
  CHECK(rc.token == "test-token-abc123");
  CHECK(rc.token_file.empty());
  CHECK(rc.client_cert_pem.empty());
  CHECK_FALSE(rc.exec);
  CHECK(rc.default_namespace == "team-a");
  CHECK_FALSE(rc.in_cluster);
  CHECK(rc.source == "kubeconfig " + fixture("kubeconfig.yaml") + " context token");
}

TEST_CASE(
    "the context flag picks another context: IPv6 server, CA and client cert from -data fields",
    "[kubeconfig]") {
  const RestConfig rc = main_context("ipv6-cert-data");
  CHECK(rc.context_name == "ipv6-cert-data");
  CHECK(rc.host == "fd00::1");
  CHECK(rc.port == "443");
  CHECK(rc.authority() == "[fd00::1]:443");
  CHECK(rc.ca_pem == slurp(fixture("pki/ca.crt")));
  CHECK(rc.client_cert_pem == slurp(fixture("pki/client.crt")));
  CHECK(rc.client_key_pem == slurp(fixture("pki/client.key")));
  CHECK(rc.token.empty());
  CHECK(rc.default_namespace == "default");
}

TEST_CASE("bracketed IPv6 with port and insecure-skip-tls-verify", "[kubeconfig]") {
  const RestConfig rc = main_context("ipv6-port-token");
  CHECK(rc.host == "::1");
  CHECK(rc.port == "8443");
  CHECK(rc.authority() == "[::1]:8443");
  CHECK(rc.insecure_skip_tls_verify);
  CHECK(rc.ca_pem.empty());
}

TEST_CASE("plain http server needs no credentials", "[kubeconfig]") {
  const RestConfig anon = main_context("plain-anonymous");
  CHECK(anon.scheme == "http");
  CHECK(anon.host == "127.0.0.1");
  CHECK(anon.port == "8080");
  CHECK(anon.token.empty());
  CHECK(anon.username.empty());

  const RestConfig no_user = main_context("plain-no-user");
  CHECK(no_user.scheme == "http");
  CHECK(no_user.host == "localhost");
  CHECK(no_user.port == "80");
}

TEST_CASE("basic auth and insecure", "[kubeconfig]") {
  const RestConfig rc = main_context("insecure-basic");
  CHECK(rc.host == "10.0.0.1");
  CHECK(rc.port == "443");
  CHECK(rc.insecure_skip_tls_verify);
  CHECK(rc.username == "admin");
  CHECK(rc.password == "hunter2-secret");
}

TEST_CASE("tokenFile and client cert files resolve against the kubeconfig folder", "[kubeconfig]") {
  const RestConfig tf = main_context("tokenfile");
  CHECK(tf.token.empty());
  CHECK(tf.token_file == fixture("tokens/token"));

  const RestConfig cert = main_context("cert-files");
  CHECK(cert.client_cert_pem == slurp(fixture("pki/client.crt")));
  CHECK(cert.client_key_pem == slurp(fixture("pki/client.key")));
}

TEST_CASE("exec user: relative command with a slash resolves, bare name is kept for PATH",
          "[kubeconfig]") {
  const RestConfig rc = main_context("exec");
  REQUIRE(rc.exec);
  CHECK(rc.exec->api_version == "client.authentication.k8s.io/v1");
  CHECK(rc.exec->command == fixture("exec/plugin.sh"));
  CHECK(rc.exec->args == std::vector<std::string>{"--cluster", "dev"});
  REQUIRE(rc.exec->env.size() == 1);
  CHECK(rc.exec->env[0] ==
        std::pair<std::string, std::string>{"PLUGIN_TOKEN_PREFIX", "from-kubeconfig"});
  CHECK(rc.exec->install_hint == "install the test plugin");
  CHECK(rc.exec->provide_cluster_info);
  CHECK(rc.exec->interactive_mode == "Never");
  CHECK(rc.default_namespace == "exec-ns");

  const RestConfig bare = main_context("exec-path");
  REQUIRE(bare.exec);
  CHECK(bare.exec->command == "plugin.sh");
  // v1beta1 may leave interactiveMode out (it defaults to IfAvailable).
  CHECK(bare.exec->api_version == "client.authentication.k8s.io/v1beta1");
  CHECK(bare.exec->interactive_mode.empty());
}

TEST_CASE("server without scheme: https when TLS is configured", "[kubeconfig]") {
  const RestConfig rc = main_context("noscheme");
  CHECK(rc.scheme == "https");
  CHECK(rc.host == "kube.local");
  CHECK(rc.port == "6443");
}

TEST_CASE("server URL forms", "[kubeconfig]") {
  const auto resolve = [](const std::string& server) {
    const std::string yaml =
        "current-context: c\nclusters:\n- name: c\n  cluster:\n    server: \"" + server +
        "\"\nusers:\n- name: u\n  user: {token: sup3r-secret-token}\n"
        "contexts:\n- name: c\n  context: {cluster: c, user: u}\n";
    return Kubeconfig::parse(yaml, "/inline/config").resolve();
  };
  const RestConfig v4 = resolve("https://192.168.1.10");
  CHECK(v4.host == "192.168.1.10");
  CHECK(v4.port == "443");
  CHECK(v4.base_path.empty());

  const RestConfig slash = resolve("https://192.168.1.10:8443/");
  CHECK(slash.port == "8443");
  CHECK(slash.base_path.empty());

  const RestConfig v6 = resolve("http://[2001:db8::1]:8080/k8s/api/");
  CHECK(v6.scheme == "http");
  CHECK(v6.host == "2001:db8::1");
  CHECK(v6.port == "8080");
  CHECK(v6.base_path == "/k8s/api");
  CHECK(v6.authority() == "[2001:db8::1]:8080");

  const RestConfig upper = resolve("HTTPS://Example.COM");
  CHECK(upper.scheme == "https");
  CHECK(upper.host == "Example.COM");

  // No scheme and no TLS settings: http, as client-go's DefaultServerURL.
  const RestConfig bare = resolve("localhost:8080");
  CHECK(bare.scheme == "http");
  CHECK(bare.port == "8080");

  const std::string prefix = "cluster \"c\" in kubeconfig /inline/config: server ";
  const auto error = [&](const std::string& server) {
    const std::string msg = error_of([&] { resolve(server); });
    check_clean(msg);
    return msg;
  };
  CHECK(error("https://h:0") == prefix + "\"https://h:0\" is not a valid URL: invalid port");
  CHECK(error("https://h:99999") ==
        prefix + "\"https://h:99999\" is not a valid URL: invalid port");
  CHECK(error("https://h:") == prefix + "\"https://h:\" is not a valid URL: invalid port");
  CHECK(error("https://2001:db8::1") ==
        prefix + "\"https://2001:db8::1\" is not a valid URL: an IPv6 address must be in brackets");
  CHECK(error("https://[zz::1]") ==
        prefix + "\"https://[zz::1]\" is not a valid URL: invalid IPv6 address");
  CHECK(error("https://") == prefix + "\"https://\" is not a valid URL: no host");
  CHECK(error("https://h/x?y=1") ==
        prefix + "\"https://h/x?y=1\" is not a valid URL: query and fragment not allowed");
  CHECK(error("https://bad host") ==
        prefix + "\"https://bad host\" is not a valid URL: invalid host");
  CHECK(error("https://[::1]x") ==
        prefix + "\"https://[::1]x\" is not a valid URL: unexpected text after ']'");
}

// ---- Precedence. ----

TEST_CASE("the kubeconfig flag beats KUBECONFIG, in-cluster and ~/.kube/config", "[kubeconfig]") {
  auto env = kInClusterEnv;
  env["KUBECONFIG"] = fixture("merge/first.yaml");
  LoadOptions o = isolated(env);
  o.home_dir = fixture("home");
  o.in_cluster_root = fixture("incluster");
  o.explicit_path = fixture("kubeconfig.yaml");
  CHECK(kube::load_rest_config(o).context_name == "token");

  o.explicit_path = fixture("missing.yaml");
  const std::string msg = error_of([&] { kube::load_rest_config(o); });
  CHECK(msg == "kubeconfig " + fixture("missing.yaml") + " (from --kubeconfig) does not exist");
}

TEST_CASE("KUBECONFIG beats in-cluster and ~/.kube/config", "[kubeconfig]") {
  auto env = kInClusterEnv;
  env["KUBECONFIG"] = fixture("merge/first.yaml");
  LoadOptions o = isolated(env);
  o.home_dir = fixture("home");
  o.in_cluster_root = fixture("incluster");
  const RestConfig rc = kube::load_rest_config(o);
  CHECK(rc.host == "first.example.com");
  CHECK(rc.token == "first-token");
  CHECK_FALSE(rc.in_cluster);
}

TEST_CASE("KUBECONFIG merge: the first file that sets a name or current-context wins",
          "[kubeconfig]") {
  const std::string first = fixture("merge/first.yaml");
  const std::string second = fixture("merge/nested/deeper/second.yaml");
  LoadOptions o = isolated({{"KUBECONFIG", first + ":" + second}});

  const RestConfig rc = kube::load_rest_config(o);
  CHECK(rc.context_name == "shared");  // current-context of first.yaml
  CHECK(rc.host == "first.example.com");
  CHECK(rc.token == "first-token");
  CHECK(rc.default_namespace == "first-ns");
  CHECK(rc.source == "kubeconfig " + first + ":" + second + " context shared");

  // Entries only the second file defines are there, with paths relative to the second file.
  o.context = "second-only";
  const RestConfig only = kube::load_rest_config(o);
  CHECK(only.host == "second.example.com");
  CHECK(only.port == "7443");
  CHECK(only.ca_pem == slurp(fixture("pki/ca.crt")));
  CHECK(only.client_cert_pem == slurp(fixture("pki/client.crt")));

  // A context from the second file naming cluster "shared" gets the first file's cluster.
  o.context = "mixed";
  const RestConfig mixed = kube::load_rest_config(o);
  CHECK(mixed.host == "first.example.com");
  CHECK(mixed.insecure_skip_tls_verify);
  CHECK(mixed.client_cert_pem == slurp(fixture("pki/client.crt")));

  // Reversed order: the second file wins.
  LoadOptions rev = isolated({{"KUBECONFIG", second + ":" + first}});
  const RestConfig r = kube::load_rest_config(rev);
  CHECK(r.context_name == "second-only");
  rev.context = "shared";
  const RestConfig rs = kube::load_rest_config(rev);
  CHECK(rs.host == "second.example.com");
  CHECK(rs.port == "7443");
  CHECK(rs.default_namespace == "second-ns");
}

TEST_CASE("KUBECONFIG skips missing files, empty and repeated entries", "[kubeconfig]") {
  const std::string first = fixture("merge/first.yaml");
  LoadOptions o = isolated(
      {{"KUBECONFIG", "::" + fixture("gone-1.yaml") + ":" + first + "::" + first + ":/nope/x"}});
  const RestConfig rc = kube::load_rest_config(o);
  CHECK(rc.host == "first.example.com");
  CHECK(rc.source == "kubeconfig " + first + " context shared");
}

TEST_CASE("KUBECONFIG naming only missing files: in-cluster if possible, else an error",
          "[kubeconfig]") {
  auto env = kInClusterEnv;
  env["KUBECONFIG"] = fixture("gone-1.yaml") + ":" + fixture("gone-2.yaml");
  LoadOptions o = isolated(env);
  o.in_cluster_root = fixture("incluster");
  CHECK(kube::load_rest_config(o).in_cluster);

  LoadOptions none = isolated({{"KUBECONFIG", fixture("gone-1.yaml")}});
  none.home_dir = fixture("home");  // not consulted when KUBECONFIG is set
  CHECK(error_of([&] { kube::load_rest_config(none); }) ==
        "KUBECONFIG=" + fixture("gone-1.yaml") +
            ": none of these files exists, and no in-cluster service account");
}

TEST_CASE("in-cluster beats ~/.kube/config", "[kubeconfig]") {
  LoadOptions o = isolated(kInClusterEnv);
  o.home_dir = fixture("home");
  o.in_cluster_root = fixture("incluster");
  o.context = "home";  // ignored in-cluster, with a warning
  const RestConfig rc = kube::load_rest_config(o);
  const std::string sa = fixture("incluster/var/run/secrets/kubernetes.io/serviceaccount");
  CHECK(rc.in_cluster);
  CHECK(rc.scheme == "https");
  CHECK(rc.host == "10.96.0.1");
  CHECK(rc.port == "443");
  CHECK(rc.token.empty());  // by path, so rotation is seen
  CHECK(rc.token_file == sa + "/token");
  CHECK(rc.ca_pem == slurp(fixture("pki/ca.crt")));
  CHECK(rc.default_namespace == "operator-system");
  CHECK(rc.source == "in-cluster service account " + sa);
}

TEST_CASE("in-cluster: POD_NAMESPACE, IPv6 host, no CA, bad CA, bad port", "[kubeconfig]") {
  const std::string root = fixture("incluster");
  auto env = kInClusterEnv;
  env["POD_NAMESPACE"] = "from-env";
  env["KUBERNETES_SERVICE_HOST"] = "fd00:10:96::1";
  const RestConfig rc = kube::load_in_cluster_config(env_of(env), root);
  CHECK(rc.default_namespace == "from-env");
  CHECK(rc.authority() == "[fd00:10:96::1]:443");

  const RestConfig no_ca =
      kube::load_in_cluster_config(env_of(kInClusterEnv), fixture("incluster-noca"));
  CHECK(no_ca.ca_pem.empty());
  CHECK(no_ca.default_namespace == "default");

  const std::string bad_ca =
      fixture("incluster-badca/var/run/secrets/kubernetes.io/serviceaccount");
  CHECK(error_of([&] {
          kube::load_in_cluster_config(env_of(kInClusterEnv), fixture("incluster-badca"));
        }) == "in-cluster CA " + bad_ca + "/ca.crt: no valid PEM certificate");

  env["KUBERNETES_SERVICE_PORT"] = "https";
  CHECK(error_of([&] { kube::load_in_cluster_config(env_of(env), root); }) ==
        "in-cluster config: KUBERNETES_SERVICE_PORT https is not a valid port");
  CHECK(error_of([&] { kube::load_in_cluster_config(env_of({}), root); }) ==
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  CHECK_FALSE(kube::in_cluster_possible(env_of(kInClusterEnv), fixture("no-such-root")));
  CHECK_FALSE(kube::in_cluster_possible(env_of({}), root));
  CHECK(kube::in_cluster_possible(env_of(kInClusterEnv), root));
}

TEST_CASE("kubeconfig: ~/.kube/config last, HOME from the environment, nothing found",
          "[kubeconfig]") {
  // Service host set but no token mounted: not in a pod, fall through to the home folder.
  LoadOptions o = isolated(kInClusterEnv);
  o.home_dir = fixture("home");
  CHECK(kube::load_rest_config(o).token == "home-token");
  o.context = "home-other";
  CHECK(kube::load_rest_config(o).default_namespace == "other");

  LoadOptions via_env = isolated({{"HOME", fixture("home")}});
  via_env.home_dir.reset();
  CHECK(kube::load_rest_config(via_env).context_name == "home");

  const LoadOptions nothing = isolated();
  CHECK(error_of([&] { kube::load_rest_config(nothing); }) ==
        "no configuration found: no --kubeconfig, KUBECONFIG is not set, no in-cluster service "
        "account, and " +
            fixture("no-such-home") + "/.kube/config does not exist");
}

// ---- Errors: one line, naming the file / context / field, never a secret. ----

TEST_CASE("YAML errors name the file and the 1-based line", "[kubeconfig]") {
  const auto load_error = [](const std::string& rel) {
    const std::string msg = error_of([&] { Kubeconfig::load_file(fixture(rel)); });
    check_clean(msg);
    return msg;
  };
  const std::string bad = load_error("errors/bad-yaml.yaml");
  CHECK_THAT(bad, Catch::StartsWith("kubeconfig " + fixture("errors/bad-yaml.yaml") +
                                    " line 7: invalid YAML: "));
  CHECK(load_error("errors/wrong-type.yaml") ==
        "kubeconfig " + fixture("errors/wrong-type.yaml") + " line 5: clusters must be a list");
  CHECK(load_error("errors/bad-bool.yaml") ==
        "kubeconfig " + fixture("errors/bad-bool.yaml") +
            " line 7: insecure-skip-tls-verify must be true or false");
  CHECK(load_error("errors/duplicate.yaml") == "kubeconfig " + fixture("errors/duplicate.yaml") +
                                                   " line 6: duplicate name \"twice\" in users");
  CHECK(load_error("errors/missing.yaml") ==
        "kubeconfig " + fixture("errors/missing.yaml") + " does not exist");
  CHECK(load_error("errors") ==
        "kubeconfig " + fixture("errors") + ": cannot read: is a directory");
}

TEST_CASE("unknown context, missing cluster or user", "[kubeconfig]") {
  const std::string file = fixture("errors/refs.yaml");
  CHECK(refs_error("") ==
        "kubeconfig " + file + ": context \"ghost\" not found (named by current-context)");
  CHECK(refs_error("nope") == "kubeconfig " + file + ": context \"nope\" not found");
  CHECK(refs_error("no-cluster") ==
        "context \"no-cluster\" in kubeconfig " + file + " names no cluster");
  CHECK(refs_error("missing-cluster") == "context \"missing-cluster\" in kubeconfig " + file +
                                             " names cluster \"gone\", which is not defined");
  CHECK(refs_error("missing-user") == "context \"missing-user\" in kubeconfig " + file +
                                          " names user \"gone\", which is not defined");
  CHECK(error_of([] { Kubeconfig::parse("", "/empty").resolve(); }) ==
        "kubeconfig /empty: no context selected (current-context is not set and no --context was "
        "given)");
}

TEST_CASE("cluster errors: server, CA file and data", "[kubeconfig]") {
  const std::string file = fixture("errors/refs.yaml");
  const auto cluster = [&](const std::string& name) {
    return "cluster \"" + name + "\" in kubeconfig " + file;
  };
  CHECK(refs_error("empty-server") == cluster("empty-server") + " has no server");
  CHECK(refs_error("bad-ca") == "certificate-authority " + fixture("pki/garbage.crt") + " of " +
                                    cluster("bad-ca") + ": no valid PEM certificate");
  CHECK(refs_error("missing-ca") == "certificate-authority " + fixture("pki/nope.crt") + " of " +
                                        cluster("missing-ca") +
                                        ": cannot read: No such file or directory");
  CHECK(refs_error("not-pem-ca") == "certificate-authority " + fixture("kubeconfig.yaml") + " of " +
                                        cluster("not-pem-ca") + ": no valid PEM certificate");
  CHECK(refs_error("bad-base64-ca") ==
        "certificate-authority-data of " + cluster("bad-base64-ca") + ": invalid base64");
  CHECK(refs_error("both-ca") ==
        cluster("both-ca") +
            ": both certificate-authority-data and certificate-authority are set; use one");
  CHECK(refs_error("insecure-with-ca") ==
        cluster("insecure-with-ca") +
            ": certificate-authority and insecure-skip-tls-verify cannot both be set");
  CHECK(refs_error("bad-url") == cluster("bad-url") +
                                     ": server \"https://[fd00::1:6443\" is not a valid URL: "
                                     "missing ']' after IPv6 address");
  CHECK(refs_error("ftp") == cluster("ftp") +
                                 ": server \"ftp://ok.example.com\" is not a valid URL: scheme "
                                 "must be https or http");
  // The URL holds a password, so it is not repeated.
  CHECK(refs_error("userinfo") ==
        cluster("userinfo") +
            ": server is not a valid URL: user info (user@host) is not supported");
}

TEST_CASE("user errors: no credentials, certificates, keys, conflicts", "[kubeconfig]") {
  const std::string file = fixture("errors/refs.yaml");
  const auto user = [&](const std::string& name) {
    return "user \"" + name + "\" in kubeconfig " + file;
  };
  CHECK(refs_error("no-credentials") ==
        user("nothing") +
            ": no usable credentials for https://ok.example.com:443 (set token, tokenFile, "
            "client-certificate and client-key, username/password or exec)");
  CHECK_THAT(refs_error("no-user"),
             Catch::StartsWith("context \"no-user\" in kubeconfig " + file +
                               " (no user): no usable credentials for https://ok.example.com:443"));
  CHECK(refs_error("key-mismatch") == "client-certificate " + fixture("pki/client.crt") +
                                          " and client-key " + fixture("pki/other.key") + " of " +
                                          user("key-mismatch") +
                                          ": client certificate and key do not match");
  CHECK(refs_error("cert-no-key") ==
        user("cert-no-key") + ": client-certificate is set without client-key");
  CHECK(refs_error("missing-key") == "client-key " + fixture("pki/missing.key") + " of " +
                                         user("missing-key") +
                                         ": cannot read: No such file or directory");
  CHECK(refs_error("key-is-cert") == "client-key " + fixture("pki/client.crt") + " of " +
                                         user("key-is-cert") +
                                         ": no valid unencrypted PEM private key");
  CHECK(refs_error("token-and-basic") ==
        user("token-and-basic") +
            ": more than one authentication method (token and username/password); only one is "
            "allowed");
  CHECK(refs_error("missing-token-file") == "tokenFile " + fixture("tokens/missing") + " of " +
                                                user("missing-token-file") +
                                                ": cannot read: No such file or directory");
  CHECK(refs_error("legacy") == user("legacy") +
                                    ": auth-provider \"gcp\" is not supported; use an exec "
                                    "credential plugin");
  CHECK(refs_error("exec-v1-no-mode") ==
        user("exec-v1-no-mode") +
            ": exec interactiveMode must be set for client.authentication.k8s.io/v1");
  CHECK(refs_error("exec-alpha") ==
        user("exec-alpha") +
            ": exec apiVersion \"client.authentication.k8s.io/v1alpha1\" is not supported (use "
            "client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1)");
}

TEST_CASE("ConfigError folds multi-line text into one line", "[kubeconfig]") {
  CHECK(std::string(ConfigError("a\nb\r\nc").what()) == "a b  c");
}

// ---- TokenSource. ----

namespace {

// What the next request would carry, fetched on a private io_context.
std::string authorization(kube::TokenSource& tokens) {
  boost::asio::io_context io;
  auto creds = boost::asio::co_spawn(io, tokens.credentials(), boost::asio::use_future);
  io.run();
  return creds.get().authorization;
}
std::string authorization(kube::TokenSource&& tokens) {
  return authorization(tokens);
}
template <class T>
std::string token(T&& tokens) {
  const std::string a = authorization(std::forward<T>(tokens));
  return a.starts_with("Bearer ") ? a.substr(7) : std::string();
}

}  // namespace

TEST_CASE("TokenSource: static token, basic auth, anonymous", "[kubeconfig]") {
  RestConfig rc;
  rc.token = "test-token-abc123";
  kube::TokenSource tokens(rc);
  CHECK(token(tokens) == "test-token-abc123");
  CHECK(authorization(tokens) == "Bearer test-token-abc123");
  CHECK(tokens.exec_provider() == nullptr);

  RestConfig basic;
  basic.username = "admin";
  basic.password = "hunter2-secret";
  kube::TokenSource basic_tokens(basic);
  CHECK(token(basic_tokens).empty());
  CHECK(authorization(basic_tokens) == "Basic YWRtaW46aHVudGVyMi1zZWNyZXQ=");

  kube::TokenSource anonymous{RestConfig{}};
  CHECK(authorization(anonymous).empty());
}

TEST_CASE("TokenSource: token file is re-read when it changes, every minute, and on 401",
          "[kubeconfig]") {
  TempDir dir;
  RestConfig rc;
  rc.token_file = dir.write("token", "tok-1\n");
  auto now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  kube::TokenSource tokens(rc, [&] { return now; });
  CHECK(token(tokens) == "tok-1");

  // A rewrite with another size is seen on the next call.
  dir.write("token", "tok-2-long");
  CHECK(token(tokens) == "tok-2-long");
  CHECK(authorization(tokens) == "Bearer tok-2-long");

  // Same size, same inode, mtime put back: invisible to stat, picked up by the periodic re-read.
  const auto mtime = fs::last_write_time(rc.token_file);
  dir.write("token", "tok-3-long");
  fs::last_write_time(rc.token_file, mtime);
  CHECK(token(tokens) == "tok-2-long");
  now += std::chrono::seconds(59);
  CHECK(token(tokens) == "tok-2-long");
  now += std::chrono::seconds(1);
  CHECK(token(tokens) == "tok-3-long");

  // invalidate() (a 401) forces a re-read right away.
  dir.write("token", "tok-4-long");
  fs::last_write_time(rc.token_file, mtime);
  CHECK(token(tokens) == "tok-3-long");
  tokens.invalidate({});
  CHECK(token(tokens) == "tok-4-long");

  // Gone or empty later: keep the last good token.
  fs::remove(rc.token_file);
  now += std::chrono::minutes(5);
  CHECK(token(tokens) == "tok-4-long");
  dir.write("token", "");
  tokens.invalidate({});
  CHECK(token(tokens) == "tok-4-long");
  dir.write("token", "tok-5\n");
  CHECK(token(tokens) == "tok-5");
}

TEST_CASE("TokenSource: a static token wins over the token file, start-up errors", "[kubeconfig]") {
  TempDir dir;
  RestConfig rc;
  rc.token = "static";
  rc.token_file = dir.write("token", "from-file");
  CHECK(token(kube::TokenSource(rc)) == "static");

  RestConfig missing;
  missing.source = "kubeconfig /k context c";
  missing.token_file = dir.path + "/missing";
  CHECK(error_of([&] { kube::TokenSource{missing}; }) ==
        "token file " + missing.token_file + ": cannot read: No such file or directory");

  RestConfig empty;
  empty.source = "kubeconfig /k context c";
  empty.token_file = dir.write("empty", " \n");
  CHECK(error_of([&] { kube::TokenSource{empty}; }) ==
        "token file " + empty.token_file + " (kubeconfig /k context c): file is empty");
}

// ---- Every field honoured or refused. ----

namespace {

// A kubeconfig with one context "c" whose cluster and user bodies are `cluster` and `user` (YAML
// lines, already indented by 4), plus `extra` at the end.
std::string one_context(const std::string& cluster, const std::string& user,
                        const std::string& extra = "") {
  return "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
         "clusters:\n- name: k\n  cluster:\n    server: https://api.example.com\n"
         "    insecure-skip-tls-verify: true\n" +
         cluster + "users:\n- name: u\n  user:\n    token: a-secret-token\n" + user +
         "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n" + extra;
}

RestConfig resolve_text(const std::string& yaml) {
  return Kubeconfig::parse(yaml, "/k/config").resolve();
}

std::string resolve_error(const std::string& yaml) {
  std::string msg = error_of([&] { resolve_text(yaml); });
  check_clean(msg);
  return msg;
}

}  // namespace

TEST_CASE("impersonation fields become RestConfig::impersonate", "[kubeconfig]") {
  const RestConfig rc = resolve_text(one_context("",
                                                 "    as: system:serviceaccount:team:bot\n"
                                                 "    as-uid: \"42\"\n"
                                                 "    as-groups: [devs, ops]\n"
                                                 "    as-user-extra:\n"
                                                 "      scopes: [view, edit]\n"
                                                 "      empty: []\n"));
  CHECK(rc.impersonate.user == "system:serviceaccount:team:bot");
  CHECK(rc.impersonate.uid == "42");
  CHECK(rc.impersonate.groups == std::vector<std::string>{"devs", "ops"});
  CHECK(rc.impersonate.extra == std::map<std::string, std::vector<std::string>>{
                                    {"scopes", {"view", "edit"}}, {"empty", {}}});
  CHECK(resolve_text(one_context("", "")).impersonate.empty());
}

TEST_CASE("impersonation without a user, or with a header-splitting value, is refused",
          "[kubeconfig]") {
  const std::string who = "user \"u\" in kubeconfig /k/config: ";
  CHECK(resolve_error(one_context("", "    as-groups: [devs]\n")) ==
        who + "as-groups, as-uid and as-user-extra need as (the user to impersonate)");
  CHECK(resolve_error(one_context("", "    as-uid: \"1\"\n")) ==
        who + "as-groups, as-uid and as-user-extra need as (the user to impersonate)");
  CHECK(resolve_error(one_context("", "    as: \"bob\\r\\nX-Evil: 1\"\n")) ==
        who + "as contains a control character");
  CHECK(resolve_error(one_context("", "    as: bob\n    as-user-extra: {k: \"a\\nb\"}\n")) ==
        "kubeconfig /k/config line 14: as-user-extra k must be a list of strings");
  CHECK(resolve_error(one_context("", "    as: bob\n    as-user-extra: {k: [\"a\\nb\"]}\n")) ==
        who + "as-user-extra k has a value with a control character");
}

TEST_CASE("a field the loader does not implement is refused, naming it", "[kubeconfig]") {
  // User, cluster, context and exec level: refused when the context uses the entry.
  CHECK(resolve_error(one_context("", "    act-as: root\n")) ==
        "user \"u\" in kubeconfig /k/config: field \"act-as\" (line 13) is not supported by this "
        "operator");
  CHECK(resolve_error(one_context("    proxy: http://p\n    tls-min: \"1.3\"\n", "")) ==
        "cluster \"k\" in kubeconfig /k/config: fields \"proxy\" (line 9), \"tls-min\" (line 10) "
        "are not supported by this operator");
  CHECK(resolve_error(one_context("", "", "    namespaces: [a]\n")) ==
        "context \"c\" in kubeconfig /k/config: field \"namespaces\" (line 18) is not supported "
        "by this operator");
  CHECK(resolve_error(one_context("",
                                  "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                                  "      command: x\n      interactiveMode: Never\n"
                                  "      timeout: 5s\n")) ==
        "user \"u\" in kubeconfig /k/config: field exec \"timeout\" (line 17) is not supported by "
        "this operator");
  // Top level and list entries: refused when the file is read.
  CHECK(error_of(
            [] { Kubeconfig::parse(one_context("", "", "current-contxt: c\n"), "/k/config"); }) ==
        "kubeconfig /k/config line 1: top level: field \"current-contxt\" (line 18) is not "
        "supported");
  CHECK(error_of([] {
          Kubeconfig::parse("users:\n- name: u\n  user: {token: t}\n  users: {}\n", "/k/config");
        }) ==
        "kubeconfig /k/config line 2: entry \"u\" of users: field \"users\" (line 4) is not "
        "supported");
}

TEST_CASE("a context namespace that would change a URL path is refused", "[kubeconfig]") {
  for (const std::string bad : {"..", "a/b", "a%2Fb"}) {
    const std::string msg = resolve_error(one_context("", "", "    namespace: \"" + bad + "\"\n"));
    CHECK(msg.starts_with("context \"c\" in kubeconfig /k/config: namespace may not "));
  }
  CHECK(resolve_text(one_context("", "", "    namespace: team-a\n")).default_namespace == "team-a");
}

TEST_CASE("unused entries, extensions and disable-compression are accepted", "[kubeconfig]") {
  const auto kc = Kubeconfig::parse(
      one_context("    disable-compression: true\n    extensions:\n    - name: x\n"
                  "      extension: {}\n"
                  "- name: unused\n  cluster: {server: https://b.example.com, lost: 1}\n",
                  "    extensions: []\n",
                  "    extensions: []\n- name: other\n  context: {cluster: unused, user: u}\n"
                  "preferences: {}\nextensions: []\n"),
      "/k/config");
  // Context "c" does not use cluster "unused", so its unsupported field does not matter: kubectl
  // ignores entries it does not use. Context "other" uses it.
  CHECK(kc.resolve("c").host == "api.example.com");
  CHECK(error_of([&] { kc.resolve("other"); }) ==
        "cluster \"unused\" in kubeconfig /k/config: field \"lost\" (line 14) is not supported by "
        "this operator");
  CHECK(error_of([&] { resolve_text(one_context("    disable-compression: maybe\n", "")); }) ==
        "kubeconfig /k/config line 9: disable-compression must be true or false");
}

TEST_CASE("proxy-url: an http proxy is used, another scheme is a one-line error", "[kubeconfig]") {
  const RestConfig rc =
      resolve_text(one_context("    proxy-url: http://user:pa55word-in-url@proxy:3128\n", ""));
  REQUIRE(rc.proxy);
  CHECK(rc.proxy->host == "proxy");
  CHECK(rc.proxy->port == "3128");
  CHECK(rc.proxy->authorization == "Basic dXNlcjpwYTU1d29yZC1pbi11cmw=");
  CHECK(rc.proxy->source == "proxy-url");
  CHECK_FALSE(resolve_text(one_context("", "")).proxy);
  // Never the URL in the message: it may carry a password.
  CHECK(resolve_error(one_context("    proxy-url: socks5://u:pa55word-in-url@proxy:1080\n", "")) ==
        "cluster \"k\" in kubeconfig /k/config: proxy-url names a socks5 proxy: scheme socks5 is "
        "not supported (only http:// proxies, through CONNECT)");
}

TEST_CASE("HTTPS_PROXY is used for the server unless NO_PROXY exempts it", "[kubeconfig]") {
  TempDir dir;
  const std::string path = dir.write("config", one_context("", ""));
  const auto load = [&](std::map<std::string, std::string> env) {
    LoadOptions o = isolated(std::move(env));
    o.explicit_path = path;
    return kube::load_rest_config(o);
  };
  CHECK_FALSE(load({}).proxy);
  CHECK_FALSE(load({{"HTTP_PROXY", "http://p:3128"}}).proxy);  // only for http servers
  CHECK_FALSE(load({{"HTTPS_PROXY", ""}}).proxy);
  const auto via = load({{"HTTPS_PROXY", "http://p:3128"}}).proxy;
  REQUIRE(via);
  CHECK(via->host == "p");
  CHECK(via->source == "HTTPS_PROXY");
  CHECK(load({{"https_proxy", "q"}}).proxy->host == "q");
  const std::string msg = error_of([&] {
    load({{"HTTPS_PROXY", "socks5://u:pa55word-in-url@p"}});
  });
  check_clean(msg);
  CHECK(msg ==
        "HTTPS_PROXY names a socks5 proxy: scheme socks5 is not supported (only http:// proxies, "
        "through CONNECT); unset HTTPS_PROXY or list api.example.com in NO_PROXY (kubeconfig " +
            path + " context c)");
  CHECK_FALSE(load({{"HTTPS_PROXY", "p:3128"}, {"NO_PROXY", "localhost, .example.com"}}).proxy);
  CHECK_FALSE(load({{"HTTPS_PROXY", "p:3128"}, {"no_proxy", "*"}}).proxy);
  CHECK(load({{"HTTPS_PROXY", "p:3128"}, {"NO_PROXY", "example.org"}}).proxy);
  // proxy-url wins over the environment, as in client-go.
  const std::string with_url =
      dir.write("with-url", one_context("    proxy-url: http://k:1\n", ""));
  LoadOptions o = isolated({{"HTTPS_PROXY", "http://p:3128"}});
  o.explicit_path = with_url;
  CHECK(kube::load_rest_config(o).proxy->host == "k");
  // The in-cluster server (an IP) is exempted by a CIDR, as clusters usually configure.
  LoadOptions in_cluster = isolated({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                     {"KUBERNETES_SERVICE_PORT", "443"},
                                     {"HTTPS_PROXY", "http://p:3128"},
                                     {"NO_PROXY", "10.96.0.0/12"}});
  in_cluster.in_cluster_root = fixture("incluster");
  CHECK_FALSE(kube::load_rest_config(in_cluster).proxy);
  // Loopback servers are never proxied.
  const std::string local = dir.write(
      "local",
      one_context("", "").replace(one_context("", "").find("api.example.com"), 15, "127.0.0.1"));
  o.explicit_path = local;
  CHECK_FALSE(kube::load_rest_config(o).proxy);
}

TEST_CASE("NO_PROXY matching follows Go's httpproxy", "[kubeconfig]") {
  using kube::no_proxy_matches;
  CHECK(no_proxy_matches("*", "api.example.com", "443"));
  CHECK(no_proxy_matches("example.com", "example.com", "443"));
  CHECK(no_proxy_matches("example.com", "api.example.com", "443"));
  CHECK(no_proxy_matches("*.example.com", "api.example.com", "443"));
  CHECK_FALSE(no_proxy_matches(".example.com", "example.com", "443"));
  CHECK(no_proxy_matches(".example.com", "a.b.example.com", "443"));
  CHECK_FALSE(no_proxy_matches("example.com", "badexample.com", "443"));
  CHECK(no_proxy_matches("example.com:6443", "api.example.com", "6443"));
  CHECK_FALSE(no_proxy_matches("example.com:6443", "api.example.com", "443"));
  CHECK(no_proxy_matches(" Example.COM ", "API.example.com", "443"));
  CHECK(no_proxy_matches("10.0.0.0/8", "10.96.0.1", "443"));
  CHECK_FALSE(no_proxy_matches("10.0.0.0/8", "11.0.0.1", "443"));
  CHECK(no_proxy_matches("fd00::/8", "fd12::1", "443"));
  CHECK(no_proxy_matches("192.168.1.5", "192.168.1.5", "443"));
  CHECK(no_proxy_matches("192.168.1.5:443", "192.168.1.5", "443"));
  CHECK_FALSE(no_proxy_matches("192.168.1.5:80", "192.168.1.5", "443"));
  CHECK(no_proxy_matches("::1", "::1", "443"));
  CHECK_FALSE(no_proxy_matches("", "api.example.com", "443"));
  CHECK_FALSE(no_proxy_matches(",, :443", "api.example.com", "443"));
}
