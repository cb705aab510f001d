// SPDX-License-Identifier: Apache-2.0
#include "kube/config/exec_credential.h"

#include <rapidjson/document.h>
#include <stdlib.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kube/config/config_error.h"
#include "kube/config/kubeconfig.h"
#include "kube/config/token_source.h"
#include "support/async_test.h"
#include "support/source_dir.h"
#include "support/temp_dir.h"

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using asio::awaitable;
using kube::ConfigError;
using kube::ExecConfig;
using kube::ExecCredentialProvider;
using kube::RestConfig;
using kube::testing::run_async;
using kube::testing::TempDir;
using std::chrono::system_clock;

const std::string kFixtures = kube::testing::source_dir() + "/test/unit/kube/fixtures";
const std::string kV1 = "client.authentication.k8s.io/v1";
const std::string kV1beta1 = "client.authentication.k8s.io/v1beta1";

std::string fixture(const std::string& rel) {
  return kFixtures + "/" + rel;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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

// A config that runs the fixture plugin `script` with `env`.
RestConfig exec_config(const std::string& script, const std::string& api_version,
                       std::vector<std::pair<std::string, std::string>> env = {}) {
  RestConfig rc;
  rc.host = "api.example.com";
  rc.port = "6443";
  rc.source = "kubeconfig /k context c";
  ExecConfig exec;
  exec.api_version = api_version;
  exec.command = fixture("exec/" + script);
  exec.env = std::move(env);
  exec.interactive_mode = "Never";
  rc.exec = exec;
  return rc;
}

// Waits (on the io_context, polling) until `done()`; fails the test after 10 s.
awaitable<void> until(std::function<bool()> done) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    t.expires_after(std::chrono::milliseconds(5));
    co_await t.async_wait(asio::use_awaitable);
  }
}

// A 10 ms timer that records how often it fired and its longest gap: proof the io_context ran.
struct Ticker {
  int ticks = 0;
  std::chrono::steady_clock::duration max_gap{};
  bool stop = false;
  awaitable<void> run() {
    asio::steady_timer t(co_await asio::this_coro::executor);
    auto last = std::chrono::steady_clock::now();
    while (!stop) {
      t.expires_after(std::chrono::milliseconds(10));
      co_await t.async_wait(asio::use_awaitable);
      const auto now = std::chrono::steady_clock::now();
      max_gap = std::max(max_gap, now - last);
      last = now;
      ++ticks;
    }
  }
};

system_clock::time_point at(const std::string& rfc3339) {
  const auto t = kube::parse_rfc3339(rfc3339);
  REQUIRE(t);
  return *t;
}

}  // namespace

TEST_CASE("RFC 3339 timestamps", "[exec]") {
  using namespace std::chrono;
  const auto base = sys_days(year(2030) / 1 / 1);
  CHECK(kube::parse_rfc3339("2030-01-01T00:00:00Z") == base);
  CHECK(kube::parse_rfc3339("2030-01-01t00:00:00z") == base);
  CHECK(kube::parse_rfc3339("2030-01-01T02:00:00+02:00") == base);
  CHECK(kube::parse_rfc3339("2029-12-31T23:30:00-00:30") == base);
  CHECK(kube::parse_rfc3339("2030-01-01T00:00:00.250Z") == base + milliseconds(250));
  CHECK(kube::parse_rfc3339("2030-01-01T00:00:00.123456789Z") == base + nanoseconds(123456789));
  CHECK(kube::parse_rfc3339("2024-02-29T12:00:00Z"));
  CHECK_FALSE(kube::parse_rfc3339("2023-02-29T12:00:00Z"));
  CHECK_FALSE(kube::parse_rfc3339("2030-01-01 00:00:00Z"));
  CHECK_FALSE(kube::parse_rfc3339("2030-01-01T00:00:00"));
  CHECK_FALSE(kube::parse_rfc3339("2030-01-01T24:00:00Z"));
  CHECK_FALSE(kube::parse_rfc3339("2030-01-01T00:00:00.Z"));
  CHECK_FALSE(kube::parse_rfc3339("2030-01-01T00:00:00Zjunk"));
  CHECK_FALSE(kube::parse_rfc3339(""));
}

TEST_CASE("ExecCredential parsing: token, cert, expiry, and every rejection", "[exec]") {
  const std::string what = "exec plugin \"p\" (src)";
  const auto cred = kube::parse_exec_credential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
          "status":{"token":"tok","expirationTimestamp":"2030-01-01T00:00:00Z"}})",
      kV1, what);
  CHECK(cred.token == "tok");
  CHECK(cred.expiry == at("2030-01-01T00:00:00Z"));
  CHECK(cred.client_cert_pem.empty());

  const auto no_expiry = kube::parse_exec_credential(
      R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",
          "spec":{},"status":{"token":"tok"}})",
      kV1beta1, what);
  CHECK_FALSE(no_expiry.expiry);

  const auto error = [&](const std::string& json) {
    const std::string msg = error_of([&] { kube::parse_exec_credential(json, kV1, what); });
    CHECK(msg.find("secret-tok") == std::string::npos);
    return msg;
  };
  CHECK_THAT(error(R"({"status":{"token":"secret-tok"})"),
             Catch::StartsWith(what + ": output is not valid JSON ("));
  CHECK(error("[]") == what + ": output is not a JSON object");
  CHECK(error(R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",
                  "status":{"token":"secret-tok"}})") ==
        what +
            ": returned apiVersion \"client.authentication.k8s.io/v1beta1\", expected "
            "\"client.authentication.k8s.io/v1\"");
  CHECK(error(R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"Secret",
                  "status":{"token":"secret-tok"}})") ==
        what + ": returned kind \"Secret\", expected \"ExecCredential\"");
  CHECK(error(R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"})") ==
        what + ": returned no status object");
  CHECK(error(R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
                  "status":{}})") ==
        what + ": returned neither status.token nor a client certificate and key");
  CHECK(error(R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
                  "status":{"token":42}})") == what + ": status.token is not a string");
  CHECK(error(R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
                  "status":{"token":"secret-tok","expirationTimestamp":"tomorrow"}})") ==
        what + ": status.expirationTimestamp \"tomorrow\" is not RFC 3339");
  CHECK(error(R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
                  "status":{"clientCertificateData":"x"}})") ==
        what + ": returned clientCertificateData without clientKeyData");
  CHECK(error(R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
                  "status":{"clientCertificateData":"x","clientKeyData":"y"}})") ==
        what + ": status.clientCertificateData: no valid PEM certificate");
}

TEST_CASE("exec v1 plugin from a kubeconfig: args, env, KUBERNETES_EXEC_INFO with cluster info",
          "[exec]") {
  TempDir dir;
  kube::LoadOptions o;
  o.env = [](const std::string&) { return std::nullopt; };
  o.explicit_path = fixture("kubeconfig.yaml");
  o.context = "exec";
  RestConfig rc = kube::load_rest_config(o);
  REQUIRE(rc.exec);
  const std::string info_file = dir.path + "/info";
  rc.exec->env.emplace_back("PLUGIN_INFO_OUT", info_file);
  ::setenv("ASOP_TEST_INHERITED", "yes", 1);

  const kube::ExecCredential cred = kube::run_exec_plugin(rc);
  CHECK(cred.token == "from-kubeconfig-1");
  CHECK_FALSE(cred.expiry);

  std::istringstream lines(slurp(info_file));
  std::string info, args, inherited;
  std::getline(lines, info);
  std::getline(lines, args);
  std::getline(lines, inherited);
  CHECK(args == "args:--cluster dev");
  CHECK(inherited == "inherited:yes");  // exec.env is added to the inherited environment

  rapidjson::Document doc;
  REQUIRE_FALSE(doc.Parse(info.c_str()).HasParseError());
  CHECK(std::string(doc["apiVersion"].GetString()) == kV1);
  CHECK(std::string(doc["kind"].GetString()) == "ExecCredential");
  CHECK(doc["spec"]["interactive"].IsFalse());
  const auto& cluster = doc["spec"]["cluster"];
  CHECK(std::string(cluster["server"].GetString()) == "https://api.example.com:6443/prefix");
  CHECK(std::string(cluster["tls-server-name"].GetString()) == "kubernetes.internal");
  CHECK(kube::decode_base64(cluster["certificate-authority-data"].GetString(), "ca") ==
        slurp(fixture("pki/ca.crt")));
}

TEST_CASE("exec info without provideClusterInfo has no cluster", "[exec]") {
  const RestConfig rc = exec_config("plugin.sh", kV1beta1);
  CHECK(kube::exec_info_json(rc) ==
        R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",)"
        R"("spec":{"interactive":false}})");
}

TEST_CASE("exec v1beta1 plugin found in PATH, and a plugin returning a client certificate",
          "[exec]") {
  RestConfig rc = exec_config("plugin.sh", kV1beta1,
                              {{"PLUGIN_API_VERSION", kV1beta1}, {"PLUGIN_TOKEN_PREFIX", "beta"}});
  rc.exec->command = "plugin.sh";
  kube::ExecOptions options;
  options.search_path = "/nonexistent:" + fixture("exec");
  CHECK(kube::run_exec_plugin(rc, options).token == "beta-1");

  const auto cert = kube::run_exec_plugin(exec_config("plugin-cert.sh", kV1beta1));
  CHECK(cert.token.empty());
  CHECK(cert.client_cert_pem == slurp(fixture("pki/client.crt")));
  CHECK(cert.client_key_pem == slurp(fixture("pki/client.key")));
}

TEST_CASE("ExecCredentialProvider caches until expirationTimestamp and refreshes ahead of it",
          "[exec]") {
  TempDir dir;
  const RestConfig rc = exec_config(
      "plugin.sh", kV1,
      {{"PLUGIN_COUNTER", dir.path + "/count"}, {"PLUGIN_EXPIRY", "2030-01-01T00:00:00Z"}});
  auto now = at("2029-12-31T23:00:00Z");
  ExecCredentialProvider provider(rc, [&] { return now; });
  asio::io_context io;
  run_async(io, [&]() -> awaitable<void> {
    // A co_await inside CHECK runs twice with GCC 12 (it hoists awaits out of the short-circuit).
    ExecCredentialProvider::Credential got;
    const auto first = co_await provider.get();
    CHECK(first->token == "exec-token-1");
    CHECK(first->expiry == at("2030-01-01T00:00:00Z"));
    now = at("2029-12-31T23:54:59Z");
    got = co_await provider.get();
    CHECK(got == first);  // cached: the plugin did not run again
    CHECK(provider.runs() == 1);

    // Five minutes before expiry the cached credential is still handed out while a refresh runs
    // in the background; only one runs.
    now = at("2029-12-31T23:55:00Z");
    got = co_await provider.get();
    CHECK(got == first);
    CHECK(provider.runs() == 2);
    got = co_await provider.get();
    CHECK(got == first);
    CHECK(provider.runs() == 2);
    co_await until([&] { return !provider.running(); });
    CHECK(provider.cached()->token == "exec-token-2");

    // The plugin returned the same expiry: the next refresh is halfway to it, not at once.
    now = at("2029-12-31T23:57:29Z");
    got = co_await provider.get();
    CHECK(got->token == "exec-token-2");
    CHECK(provider.runs() == 2);

    // Expired: the request waits for a run, whose credential is used even if already expired.
    now = at("2030-01-01T00:00:00Z");
    CHECK(provider.cached() == nullptr);
    got = co_await provider.get();
    CHECK(got->token == "exec-token-3");
    got = co_await provider.get();
    CHECK(got->token == "exec-token-4");
  }());
  CHECK(slurp(dir.path + "/count") == "4\n");
}

TEST_CASE("ExecCredentialProvider without expiry caches until a 401 of the cached credential",
          "[exec]") {
  TempDir dir;
  const RestConfig rc = exec_config("plugin.sh", kV1, {{"PLUGIN_COUNTER", dir.path + "/count"}});
  auto now = at("2030-01-01T00:00:00Z");
  kube::TokenSource tokens(rc, &std::chrono::steady_clock::now,
                           std::make_unique<ExecCredentialProvider>(rc, [&] { return now; }));
  REQUIRE(tokens.exec_provider() != nullptr);
  asio::io_context io;
  run_async(io, [&]() -> awaitable<void> {
    kube::TokenSource::Credentials got;
    const auto a = co_await tokens.credentials();
    CHECK(a.authorization == "Bearer exec-token-1");
    now += std::chrono::hours(24 * 365);
    got = co_await tokens.credentials();
    CHECK(got.exec == a.exec);

    tokens.invalidate(a);
    const auto b = co_await tokens.credentials();
    CHECK(b.authorization == "Bearer exec-token-2");
    // A late 401 to a request sent with `a` (client-go's maybeRefreshCreds): `a` is no longer
    // cached, so the plugin does not run again.
    tokens.invalidate(a);
    got = co_await tokens.credentials();
    CHECK(got.exec == b.exec);
    CHECK(tokens.exec_provider()->runs() == 2);

    tokens.invalidate(b);
    got = co_await tokens.credentials();
    CHECK(got.authorization == "Bearer exec-token-3");
  }());
}

TEST_CASE("ExecCredentialProvider: one run for concurrent requests, the io_context keeps running",
          "[exec]") {
  TempDir dir;
  const RestConfig rc = exec_config(
      "plugin.sh", kV1, {{"PLUGIN_COUNTER", dir.path + "/count"}, {"PLUGIN_SLEEP", "1"}});
  ExecCredentialProvider provider(rc);
  asio::io_context io;
  Ticker ticker;
  std::vector<ExecCredentialProvider::Credential> got(4);
  run_async(io, [&]() -> awaitable<void> {
    asio::co_spawn(io, ticker.run(), asio::detached);
    for (int i = 1; i < 4; ++i) {
      asio::co_spawn(
          io, [&, i]() -> awaitable<void> { got[i] = co_await provider.get(); }, asio::detached);
    }
    got[0] = co_await provider.get();
    co_await until([&] { return got[1] && got[2] && got[3]; });
    ticker.stop = true;
  }());
  CHECK(slurp(dir.path + "/count") == "1\n");
  CHECK(provider.runs() == 1);
  CHECK(got[0]->token == "exec-token-1");
  for (const auto& g : got) CHECK(g == got[0]);
  // The plugin slept a second; a 10 ms timer kept firing all along (a blocking run: no tick, a
  // 1 s gap). The bounds leave room for a loaded machine.
  CHECK(ticker.ticks >= 10);
  CHECK(ticker.max_gap < std::chrono::milliseconds(700));
}

TEST_CASE("ExecCredentialProvider backs off after a failed run", "[exec]") {
  TempDir dir;
  const std::string fail = dir.path + "/fail";
  std::ofstream(fail).put('x');
  const RestConfig rc = exec_config("plugin.sh", kV1,
                                    {{"PLUGIN_COUNTER", dir.path + "/count"},
                                     {"PLUGIN_FAIL_IF", fail},
                                     {"PLUGIN_EXPIRY", "2030-01-01T00:00:00Z"}});
  auto now = at("2029-12-31T22:00:00Z");
  kube::ExecRefreshPolicy policy;
  policy.max_backoff = std::chrono::seconds(4);
  ExecCredentialProvider provider(
      rc, [&] { return now; }, {}, policy);
  asio::io_context io;
  using std::chrono::milliseconds;
  run_async(io, [&]() -> awaitable<void> {
    const auto failure = [&]() -> awaitable<std::string> {
      try {
        co_await provider.get();
      } catch (const ConfigError& e) {
        co_return e.what();
      }
      co_return "no error";
    };
    std::string error;
    ExecCredentialProvider::Credential got;
    error = co_await failure();
    CHECK_THAT(error, Catch::EndsWith(": exited with code 3: error: run 1 failed"));
    // Within the backoff a request fails at once, with the last error and no run.
    error = co_await failure();
    CHECK_THAT(error, Catch::EndsWith("error: run 1 failed (next run in 1000 ms)"));
    now += milliseconds(999);
    error = co_await failure();
    CHECK_THAT(error, Catch::EndsWith("(next run in 1 ms)"));
    CHECK(provider.runs() == 1);
    now += milliseconds(1);
    error = co_await failure();
    CHECK_THAT(error, Catch::EndsWith("error: run 2 failed"));
    now += milliseconds(1999);
    error = co_await failure();
    CHECK_THAT(error, Catch::EndsWith("(next run in 1 ms)"));
    now += milliseconds(1);
    error = co_await failure();
    CHECK_THAT(error, Catch::EndsWith("error: run 3 failed"));
    now += milliseconds(4000);  // 8 s capped at max_backoff
    error = co_await failure();
    CHECK_THAT(error, Catch::EndsWith("error: run 4 failed"));
    CHECK(provider.runs() == 4);

    // A success resets the backoff. A background refresh that fails keeps the valid credential.
    now += milliseconds(4000);
    std::filesystem::remove(fail);
    got = co_await provider.get();
    CHECK(got->token == "exec-token-5");
    std::ofstream(fail).put('x');
    now = at("2029-12-31T23:55:00Z");
    got = co_await provider.get();
    CHECK(got->token == "exec-token-5");
    co_await until([&] { return !provider.running(); });
    CHECK(provider.runs() == 6);
    now += milliseconds(999);
    got = co_await provider.get();
    CHECK(got->token == "exec-token-5");
    CHECK(provider.runs() == 6);
    std::filesystem::remove(fail);
    now += milliseconds(1);
    got = co_await provider.get();
    CHECK(got->token == "exec-token-5");
    co_await until([&] { return !provider.running(); });
    CHECK(provider.runs() == 7);
    CHECK(provider.cached()->token == "exec-token-7");
  }());
}

TEST_CASE("exec plugin failures: one line, no credential", "[exec]") {
  const std::string src = "(kubeconfig /k context c)";

  RestConfig missing = exec_config("plugin.sh", kV1);
  missing.exec->command = "no-such-auth-plugin";
  missing.exec->install_hint = "Install it:\n  brew install no-such-auth-plugin";
  kube::ExecOptions options;
  options.search_path = fixture("exec");
  CHECK(error_of([&] { kube::run_exec_plugin(missing, options); }) ==
        "exec plugin \"no-such-auth-plugin\" " + src +
            " not found in PATH; Install it:   brew install no-such-auth-plugin");

  // A relative PATH entry would run whatever the working folder holds (Go's exec.ErrDot).
  RestConfig bare = exec_config("plugin.sh", kV1);
  bare.exec->command = "plugin.sh";
  kube::ExecOptions relative;
  const std::string rel = fs::relative(fixture("exec")).string();
  relative.search_path = "/nonexistent:" + rel;
  CHECK(error_of([&] { kube::run_exec_plugin(bare, relative); }) ==
        "exec plugin \"plugin.sh\" " + src + " resolves to " + rel +
            "/plugin.sh through the relative PATH entry \"" + rel +
            "\", which is refused (name the command by absolute path or remove the entry)");

  RestConfig gone = exec_config("missing.sh", kV1);
  CHECK(error_of([&] { kube::run_exec_plugin(gone); }) == "exec plugin \"" +
                                                              fixture("exec/missing.sh") + "\" " +
                                                              src + " not found or not executable");

  const RestConfig fail = exec_config("plugin-fail.sh", kV1);
  CHECK(error_of([&] { kube::run_exec_plugin(fail); }) ==
        "exec plugin \"" + fixture("exec/plugin-fail.sh") + "\" " + src +
            ": exited with code 3: error: credentials for profile test have expired");

  const RestConfig bad_json = exec_config("plugin-badjson.sh", kV1);
  const std::string bad = error_of([&] { kube::run_exec_plugin(bad_json); });
  CHECK_THAT(bad, Catch::StartsWith("exec plugin \"" + fixture("exec/plugin-badjson.sh") + "\" " +
                                    src + ": output is not valid JSON ("));
  CHECK(bad.find("leaked-token-xyz") == std::string::npos);

  const RestConfig wrong_version =
      exec_config("plugin.sh", kV1, {{"PLUGIN_API_VERSION", kV1beta1}});
  const std::string wrong = error_of([&] { kube::run_exec_plugin(wrong_version); });
  CHECK(wrong == "exec plugin \"" + fixture("exec/plugin.sh") + "\" " + src +
                     ": returned apiVersion \"" + kV1beta1 + "\", expected \"" + kV1 + "\"");
  CHECK(wrong.find("exec-token") == std::string::npos);

  kube::ExecOptions small;
  small.max_output_bytes = 16;
  CHECK(error_of([&] { kube::run_exec_plugin(exec_config("plugin.sh", kV1), small); }) ==
        "exec plugin \"" + fixture("exec/plugin.sh") + "\" " + src + ": output exceeds 16 bytes");

  kube::ExecOptions quick;
  quick.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  CHECK(error_of([&] { kube::run_exec_plugin(exec_config("plugin-slow.sh", kV1), quick); }) ==
        "exec plugin \"" + fixture("exec/plugin-slow.sh") + "\" " + src +
            ": timed out after 300 ms and was killed");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}
