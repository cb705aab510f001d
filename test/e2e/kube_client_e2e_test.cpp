// SPDX-License-Identifier: Apache-2.0
// The kube client layer against a real kube-apiserver (test/controlplane/up.sh): every auth kind,
// TLS verification, REST verbs with pagination, apply, patches and delete, and watches including
// one from a compacted resourceVersion. Each test uses its own namespace and deletes it.

#include <rapidjson/document.h>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "e2e_support.h"
#include "kube/api/rest_client.h"
#include "kube/config/kubeconfig.h"
#include "kube/watch/watch_stream.h"
#include "support/async_test.h"

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::awaitable;
using kube::Errc;
using kube::HttpTransport;
using kube::ResourcePath;
using kube::RestClient;
using kube::RestConfig;
using kube::WatchEvent;
using kube::testing::run_async;
using namespace std::chrono_literals;

namespace {

const auto kNamespaces = ResourcePath::from_api_version("v1", "namespaces");
const auto kConfigMaps = ResourcePath::from_api_version("v1", "configmaps");
const auto kEvents = ResourcePath::from_api_version("v1", "events");

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The control plane the suite runs against: KUBECONFIG (admin client certificate) and, in the same
// folder, the static admin token and the etcd URL written by up.sh.
struct ControlPlane {
  std::filesystem::path dir;
  RestConfig cert;  // client-certificate auth, from the kubeconfig
  std::string token_file;
  std::string etcd_url;

  static const ControlPlane& get() {
    static const ControlPlane cp = [] {
      const std::string kubeconfig = e2e::kubeconfig_path();
      ControlPlane c;
      const char* dir = std::getenv("ASOP_CONTROLPLANE_DIR");
      c.dir = dir != nullptr ? std::filesystem::path(dir)
                             : std::filesystem::path(kubeconfig).parent_path();
      c.cert = kube::Kubeconfig::load_file(kubeconfig).resolve();
      c.token_file = (c.dir / "token").string();
      c.etcd_url = trim(read_file(c.dir / "etcd-url"));
      return c;
    }();
    return cp;
  }

  RestConfig token() const {
    RestConfig c = cert;
    c.client_cert_pem.clear();
    c.client_key_pem.clear();
    c.token = trim(read_file(token_file));
    return c;
  }

  RestConfig exec() const {
    RestConfig c = cert;
    c.client_cert_pem.clear();
    c.client_key_pem.clear();
    kube::ExecConfig e;
    e.api_version = "client.authentication.k8s.io/v1";
    e.command = ASOP_SOURCE_DIR "/test/e2e/fixtures/exec-credential.sh";
    e.env = {{"ASOP_E2E_TOKEN_FILE", token_file}};
    e.interactive_mode = "Never";
    c.exec = e;
    return c;
  }
};

std::shared_ptr<HttpTransport> transport_for(
    asio::io_context& io, RestConfig config,
    std::shared_ptr<kube::RequestMetrics> metrics = std::make_shared<kube::RequestMetrics>()) {
  HttpTransport::Options options;
  options.request_timeout = 30s;
  return std::make_shared<HttpTransport>(io.get_executor(), std::move(config), options, nullptr,
                                         std::move(metrics));
}

rapidjson::Document parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

std::string str(const rapidjson::Value& v) {
  return {v.GetString(), v.GetStringLength()};
}
std::string rv_of(const rapidjson::Value& obj) {
  return str(obj["metadata"]["resourceVersion"]);
}

// The user the server sees for this client's credentials (SelfSubjectReview).
awaitable<std::string> whoami(RestClient& client) {
  auto res = co_await client.create(
      ResourcePath::from_api_version("authentication.k8s.io/v1", "selfsubjectreviews"),
      R"({"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"})");
  if (!res) co_return "error: " + res.error().describe();
  co_return str((*res->body)["status"]["userInfo"]["username"]);
}

std::string config_map(const std::string& ns, const std::string& name, const std::string& label,
                       const std::string& value) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
         R"(","namespace":")" + ns + R"(","labels":{"e2e":")" + label + R"("}},"data":{"k":")" +
         value + R"("}})";
}

// etcd's current revision and a physical compaction up to it, through its HTTP/JSON gateway.
awaitable<void> compact_etcd(asio::io_context& io, const std::string& etcd_url) {
  RestConfig c;
  c.scheme = "http";
  const std::string hostport = etcd_url.substr(etcd_url.find("://") + 3);
  c.host = hostport.substr(0, hostport.rfind(':'));
  c.port = hostport.substr(hostport.rfind(':') + 1);
  auto etcd = transport_for(io, c);
  kube::HttpRequest range;
  range.method = http::verb::post;
  range.target = "/v3/kv/range";
  range.content_type = "application/json";
  range.body = R"({"key":"AA=="})";
  auto res = co_await etcd->send(range);
  REQUIRE(res.ok());
  REQUIRE(res->status == 200);
  const std::string revision = str(parse(res->body)["header"]["revision"]);
  kube::HttpRequest compact = range;
  compact.target = "/v3/kv/compaction";
  compact.body = R"({"revision":)" + revision + R"(,"physical":true})";
  auto compacted = co_await etcd->send(compact);
  REQUIRE(compacted.ok());
  REQUIRE(compacted->status == 200);
}

}  // namespace

TEST_CASE("token, client-certificate and exec-plugin credentials authenticate", "[e2e][kube]") {
  const auto& cp = ControlPlane::get();
  asio::io_context io;
  RestClient by_cert(transport_for(io, cp.cert));
  RestClient by_token(transport_for(io, cp.token()));
  RestClient by_exec(transport_for(io, cp.exec()));
  RestConfig bad = cp.token();
  bad.token = "not-a-valid-token";
  RestClient by_bad_token(transport_for(io, bad));
  run_async(io, [&]() -> awaitable<void> {
    // up.sh's PKI: the client certificate is CN=admin, the static token's user is admin-token.
    const std::string cert_user = co_await whoami(by_cert);
    CHECK(cert_user == "admin");
    const std::string token_user = co_await whoami(by_token);
    CHECK(token_user == "admin-token");
    const std::string exec_user = co_await whoami(by_exec);
    CHECK(exec_user == "admin-token");
    auto denied = co_await by_bad_token.get(kNamespaces.named("default"));
    REQUIRE_FALSE(denied.ok());
    CHECK(denied.error().is(Errc::unauthorized));
    CHECK(denied.error().http_status == 401);
  }());
}

TEST_CASE("TLS: a wrong CA fails clearly, tls-server-name is verified, insecure skips",
          "[e2e][kube]") {
  const auto& cp = ControlPlane::get();
  const std::string other_ca = read_file(ASOP_SOURCE_DIR "/test/e2e/fixtures/other-ca.crt");
  asio::io_context io;
  RestConfig wrong_ca = cp.token();
  wrong_ca.ca_pem = other_ca;
  RestConfig by_name = cp.token();
  by_name.tls_server_name = "kubernetes";  // a DNS SAN of the apiserver certificate
  RestConfig wrong_name = cp.token();
  wrong_name.tls_server_name = "not-the-apiserver.example";
  RestConfig insecure = wrong_ca;
  insecure.insecure_skip_tls_verify = true;
  RestConfig localhost = cp.token();
  localhost.host = "localhost";
  RestClient c_wrong_ca(transport_for(io, wrong_ca));
  RestClient c_by_name(transport_for(io, by_name));
  RestClient c_wrong_name(transport_for(io, wrong_name));
  RestClient c_insecure(transport_for(io, insecure));
  RestClient c_localhost(transport_for(io, localhost));
  run_async(io, [&]() -> awaitable<void> {
    const auto target = kNamespaces.named("default");
    auto untrusted = co_await c_wrong_ca.get(target);
    REQUIRE_FALSE(untrusted.ok());
    CHECK(untrusted.error().is(Errc::unavailable));
    CHECK_THAT(untrusted.error().message, Catch::Contains("TLS handshake with 127.0.0.1:") &&
                                              Catch::Contains("server certificate not trusted"));
    INFO(untrusted.error().message);

    auto named = co_await c_by_name.get(target);
    CHECK(named.ok());
    auto mismatch = co_await c_wrong_name.get(target);
    REQUIRE_FALSE(mismatch.ok());
    CHECK_THAT(mismatch.error().message, Catch::Contains("hostname mismatch"));
    auto skipped = co_await c_insecure.get(target);
    CHECK(skipped.ok());
    auto by_dns = co_await c_localhost.get(target);
    CHECK(by_dns.ok());
  }());
}

TEST_CASE("ConfigMaps: create, paginated list, get, apply, patches, delete", "[e2e][kube]") {
  const auto& cp = ControlPlane::get();
  asio::io_context io;
  auto metrics = std::make_shared<kube::RequestMetrics>();
  auto transport = transport_for(io, cp.token(), metrics);
  RestClient client(transport);
  run_async(
      io,
      e2e::in_namespace(
          client, e2e::unique_name("asop-e2e-rest"), [&](std::string ns) -> awaitable<void> {
            const auto cms = kConfigMaps.in_namespace(ns);
            const auto start = std::chrono::steady_clock::now();
            for (int i = 0; i < 50; ++i) {
              auto created = co_await client.create(
                  cms, config_map(ns, "cm-" + std::to_string(i), "page", std::to_string(i)));
              REQUIRE(created.ok());
              CHECK(created->status == 201);
            }
            const auto took = std::chrono::steady_clock::now() - start;
            WARN("50 creates took "
                 << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms on "
                 << transport->connections_opened() << " connection(s)");
            // Sequential requests share one keep-alive connection (plus the namespace create).
            CHECK(transport->connections_opened() <= 2);

            // Page by hand with limit=7: 8 pages, every object exactly once.
            kube::ListOptions o;
            o.limit = 7;
            o.label_selector = "e2e=page";  // excludes the namespace's kube-root-ca.crt
            std::set<std::string> names;
            int pages = 0;
            for (;;) {
              auto page = co_await client.list(cms, o);
              REQUIRE(page.ok());
              ++pages;
              const auto& items = (*page->body)["items"];
              CHECK(items.Size() <= 7);
              for (const auto& item : items.GetArray()) names.insert(str(item["metadata"]["name"]));
              const auto& md = (*page->body)["metadata"];
              if (!md.HasMember("continue") || md["continue"].GetStringLength() == 0) break;
              o.continue_token = str(md["continue"]);
            }
            CHECK(pages == 8);
            CHECK(names.size() == 50);

            kube::ListOptions all;
            all.limit = 7;
            all.label_selector = "e2e=page";
            auto joined = co_await client.list_all(cms, all);
            REQUIRE(joined.ok());
            CHECK((*joined->body)["items"].Size() == 50);
            CHECK_FALSE((*joined->body)["metadata"]["resourceVersion"].GetStringLength() == 0);

            auto got = co_await client.get(cms.named("cm-7"));
            REQUIRE(got.ok());
            CHECK(str((*got->body)["data"]["k"]) == "7");

            // Server-side apply: the second identical apply changes nothing, not even the RV.
            const std::string desired = config_map(ns, "applied", "apply", "v1");
            auto first = co_await client.apply(cms.named("applied"), desired, "asop-e2e");
            REQUIRE(first.ok());
            auto second = co_await client.apply(cms.named("applied"), desired, "asop-e2e");
            REQUIRE(second.ok());
            CHECK(rv_of(*second->body) == rv_of(*first->body));

            auto merged = co_await client.patch(cms.named("applied"), kube::PatchType::merge,
                                                R"({"data":{"k":"merged"}})");
            REQUIRE(merged.ok());
            CHECK(str((*merged->body)["data"]["k"]) == "merged");

            // JSON patch guarded by a test op that no longer holds.
            auto guarded = co_await client.patch(
                cms.named("applied"), kube::PatchType::json,
                R"([{"op":"test","path":"/data/k","value":"v1"},{"op":"replace","path":"/data/k","value":"x"}])");
            REQUIRE_FALSE(guarded.ok());
            INFO(guarded.error().describe());
            CHECK((guarded.error().is(Errc::conflict) || guarded.error().is(Errc::invalid)));

            // Delete with a stale uid precondition is a conflict; a plain delete succeeds.
            kube::DeleteOptions stale;
            stale.precondition_uid = "00000000-0000-0000-0000-000000000000";
            auto refused = co_await client.delete_(cms.named("applied"), stale);
            REQUIRE_FALSE(refused.ok());
            CHECK(refused.error().is(Errc::conflict));
            kube::DeleteOptions current;
            current.precondition_uid = str((*merged->body)["metadata"]["uid"]);
            current.propagation_policy = "Background";
            auto deleted = co_await client.delete_(cms.named("applied"), current);
            REQUIRE(deleted.ok());
            CHECK((deleted->status == 200 || deleted->status == 202));
            auto gone = co_await client.get(cms.named("applied"));
            REQUIRE_FALSE(gone.ok());
            CHECK(gone.error().is(Errc::not_found));
          }));
  // rest_client_requests_total: the namespace and 51 ConfigMaps created, 409 twice (patch test
  // op may be 422 instead), one 404.
  CHECK(metrics->count("201", "POST", transport->host()) == 51);
  CHECK(metrics->count("404", "GET", transport->host()) == 1);
}

TEST_CASE("a watch sees ADDED, MODIFIED, DELETED in order and ends cleanly", "[e2e][kube]") {
  const auto& cp = ControlPlane::get();
  asio::io_context io;
  auto transport = transport_for(io, cp.cert);
  RestClient client(transport);
  run_async(io,
            e2e::in_namespace(
                client, e2e::unique_name("asop-e2e-watch"), [&](std::string ns) -> awaitable<void> {
                  const auto cms = kConfigMaps.in_namespace(ns);
                  kube::ListOptions lo;
                  lo.label_selector = "e2e=watch";
                  auto listed = co_await client.list_all(cms, lo);
                  REQUIRE(listed.ok());
                  kube::WatchOptions wo;
                  wo.resource_version = rv_of(*listed->body);
                  wo.timeout_seconds = 60;
                  wo.label_selector = "e2e=watch";
                  auto opened = co_await client.watch(cms, wo);
                  REQUIRE(opened.ok());
                  auto& w = *opened;

                  auto created = co_await client.create(cms, config_map(ns, "w", "watch", "1"));
                  REQUIRE(created.ok());
                  auto patched = co_await client.patch(cms.named("w"), kube::PatchType::merge,
                                                       R"({"data":{"k":"2"}})");
                  REQUIRE(patched.ok());
                  auto deleted = co_await client.delete_(cms.named("w"));
                  REQUIRE(deleted.ok());

                  std::vector<WatchEvent::Type> types;
                  std::vector<std::string> rvs;
                  while (types.size() < 3) {
                    auto ev = co_await w->next();
                    REQUIRE(ev.ok());
                    REQUIRE(ev->has_value());
                    if ((*ev)->type == WatchEvent::Type::bookmark) continue;
                    CHECK(str((**ev).object->operator[]("metadata")["name"]) == "w");
                    types.push_back((*ev)->type);
                    rvs.push_back((*ev)->resource_version);
                  }
                  CHECK(types == std::vector<WatchEvent::Type>{WatchEvent::Type::added,
                                                               WatchEvent::Type::modified,
                                                               WatchEvent::Type::deleted});
                  CHECK(rvs[0] == rv_of(*created->body));
                  CHECK(rvs[1] == rv_of(*patched->body));
                  w->cancel();

                  // timeoutSeconds=1: the server ends the watch, which is a clean end, not an
                  // error.
                  kube::WatchOptions brief = wo;
                  brief.resource_version = rvs[2];
                  brief.timeout_seconds = 1;
                  auto short_watch = co_await kube::WatchStream::open(*transport, cms, brief);
                  REQUIRE(short_watch.ok());
                  for (;;) {
                    auto ev = co_await (*short_watch)->next();
                    REQUIRE(ev.ok());
                    if (!ev->has_value()) break;
                    CHECK((*ev)->type == WatchEvent::Type::bookmark);
                  }
                }));
}

TEST_CASE("a watch from a compacted resourceVersion is gone", "[e2e][serial][kube]") {
  const auto& cp = ControlPlane::get();
  asio::io_context io;
  auto transport = transport_for(io, cp.token());
  RestClient client(transport);
  run_async(
      io, e2e::in_namespace(
              client, e2e::unique_name("asop-e2e-compact"), [&](std::string ns) -> awaitable<void> {
                // core/v1 Events bypass the apiserver's watch cache (disabled for events by
                // default), so the watch reaches etcd and sees the compaction.
                const auto events = kEvents.in_namespace(ns);
                auto event = [&](const std::string& name) {
                  return R"({"apiVersion":"v1","kind":"Event","metadata":{"name":")" + name +
                         R"("},"involvedObject":{"kind":"ConfigMap","name":"x","namespace":")" +
                         ns + R"("},"reason":"E2E","message":"compaction test","type":"Normal"})";
                };
                auto first = co_await client.create(events, event("first"));
                REQUIRE(first.ok());
                const std::string old_rv = rv_of(*first->body);
                // Two more writes: etcd keeps the compaction revision itself, so the watch must
                // start (at old_rv + 1) strictly below it to hit compacted history.
                auto second = co_await client.create(events, event("second"));
                REQUIRE(second.ok());
                auto third = co_await client.create(events, event("third"));
                REQUIRE(third.ok());
                co_await compact_etcd(io, cp.etcd_url);

                kube::WatchOptions wo;
                wo.resource_version = old_rv;
                wo.timeout_seconds = 30;
                auto opened = co_await kube::WatchStream::open(*transport, events, wo);
                if (!opened.ok()) {
                  // Some versions answer the open itself with 410.
                  CHECK(opened.error().is(Errc::gone));
                  co_return;
                }
                auto ev = co_await (*opened)->next();
                REQUIRE_FALSE(ev.ok());
                INFO(ev.error().describe());
                CHECK(ev.error().is(Errc::gone));
                CHECK(ev.error().http_status == 410);
              }));
}
