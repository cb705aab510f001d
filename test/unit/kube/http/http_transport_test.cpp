// SPDX-License-Identifier: Apache-2.0
#include "kube/http/http_transport.h"

#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "kube/config/token_source.h"
#include "support/async_test.h"
#include "support/fake_api_server.h"
#include "support/http_test_support.h"

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::awaitable;
using kube::Errc;
using kube::HttpRequest;
using kube::HttpTransport;
using kube::testing::FakeApiServer;
using kube::testing::get;
using kube::testing::run_async;
using namespace std::chrono_literals;

namespace {

kube::RestConfig plain_config(const FakeApiServer& server) {
  return kube::testing::plain_config(server.port());
}

HttpRequest post(std::string target) {
  HttpRequest r;
  r.method = http::verb::post;
  r.target = std::move(target);
  r.content_type = "application/json";
  r.body = "{}";
  return r;
}

std::shared_ptr<HttpTransport> make_transport(asio::io_context& io, kube::RestConfig config,
                                              HttpTransport::Options options = {},
                                              std::shared_ptr<kube::RequestMetrics> m = nullptr) {
  return std::make_shared<HttpTransport>(io.get_executor(), std::move(config), options, nullptr,
                                         std::move(m));
}

// A token file in a fresh temporary folder, removed with the object.
struct TempTokenFile {
  std::filesystem::path dir;
  std::filesystem::path path;
  explicit TempTokenFile(const std::string& token) {
    char tmpl[] = "/tmp/asop-token-XXXXXX";
    dir = ::mkdtemp(tmpl);
    path = dir / "token";
    write(token);
  }
  ~TempTokenFile() { std::filesystem::remove_all(dir); }
  void write(const std::string& token) const {
    // Replace atomically with a new inode, as the kubelet does, so the change is always seen.
    const auto tmp = dir / "token.new";
    std::ofstream(tmp) << token << "\n";
    std::filesystem::rename(tmp, path);
  }
};

// What a server answering 200 saw of one GET sent with plain_config changed by `edit`.
FakeApiServer::Request one_get(const std::function<void(kube::RestConfig&)>& edit) {
  asio::io_context io;
  FakeApiServer server(
      io, [](const FakeApiServer::Request&) { return FakeApiServer::Reply::json(200, "{}"); });
  auto config = plain_config(server);
  edit(config);
  auto transport = make_transport(io, config);
  run_async(
      io,
      [&]() -> awaitable<void> {
        // Never co_await inside a Catch2 macro: GCC 12 may evaluate it twice.
        auto res = co_await transport->send(get("/api"));
        REQUIRE(res.ok());
      }(),
      [&] { server.stop(); });
  REQUIRE(server.requests() == 1);
  return server.seen()[0];
}

}  // namespace

TEST_CASE("keep-alive connections are reused across requests", "[http]") {
  asio::io_context io;
  FakeApiServer server(io, [](const FakeApiServer::Request& r) {
    return FakeApiServer::Reply::json(200, "{\"path\":\"" + r.target + "\"}");
  });
  auto metrics = std::make_shared<kube::RequestMetrics>();
  auto transport = make_transport(io, plain_config(server), {}, metrics);
  run_async(
      io,
      [&]() -> awaitable<void> {
        for (int i = 0; i < 5; ++i) {
          auto res = co_await transport->send(get("/api/v1/namespaces/x" + std::to_string(i)));
          REQUIRE(res.ok());
          CHECK(res->status == 200);
          CHECK(res->body == "{\"path\":\"/api/v1/namespaces/x" + std::to_string(i) + "\"}");
          CHECK(res->content_type == "application/json");
        }
      }(),
      [&] { server.stop(); });
  CHECK(server.requests() == 5);
  CHECK(server.connections() == 1);
  CHECK(transport->connections_opened() == 1);
  CHECK(metrics->count("200", "GET", "127.0.0.1:" + std::to_string(server.port())) == 5);
  // Transport headers on every request; no credentials configured, so no Authorization.
  for (const auto& r : server.seen()) {
    CHECK(r.user_agent == std::string("appservice-operator/") + ASOP_VERSION);
    CHECK(r.accept == "application/json");
    CHECK(r.authorization.empty());
  }
}

TEST_CASE("the User-Agent names the program built on the client", "[http]") {
  asio::io_context io;
  FakeApiServer server(
      io, [](const FakeApiServer::Request&) { return FakeApiServer::Reply::json(200, "{}"); });
  HttpTransport::Options options;
  options.user_agent = "configmap-sync/1.2.3";
  auto transport = make_transport(io, plain_config(server), options);
  run_async(
      io,
      [&]() -> awaitable<void> {
        auto res = co_await transport->send(get("/api"));
        REQUIRE(res.ok());
      }(),
      [&] { server.stop(); });
  REQUIRE(server.requests() == 1);
  CHECK(server.seen()[0].user_agent == "configmap-sync/1.2.3");
}

TEST_CASE("concurrent requests open separate connections, then share the pool", "[http]") {
  asio::io_context io;
  FakeApiServer server(
      io, [](const FakeApiServer::Request&) { return FakeApiServer::Reply::json(200, "{}"); });
  HttpTransport::Options options;
  options.max_idle_connections = 2;
  auto transport = make_transport(io, plain_config(server), options);
  int finished = 0;
  run_async(
      io,
      [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        // Three requests in flight at once need three connections; only two stay pooled.
        for (int i = 0; i < 3; ++i) {
          asio::co_spawn(
              ex,
              [&]() -> awaitable<void> {
                auto res = co_await transport->send(get("/api"));
                CHECK(res.ok());
                ++finished;
              },
              asio::detached);
        }
        auto res = co_await transport->send(get("/api"));
        REQUIRE(res.ok());
        // Wait (without sleeping) for the three detached requests: yield to the loop.
        while (finished < 3) co_await asio::post(ex, asio::use_awaitable);
        CHECK(transport->idle_connections() == 2);
        auto again = co_await transport->send(get("/api"));
        REQUIRE(again.ok());
      }(),
      [&] { server.stop(); });
  CHECK(transport->connections_opened() == 4);
  CHECK(server.requests() == 5);
}

TEST_CASE("a stale pooled connection is retried once for GET", "[http]") {
  asio::io_context io;
  // The server drops a kept-alive connection when its second request arrives, before answering,
  // as a server whose idle timeout fired would.
  FakeApiServer server(io, [](const FakeApiServer::Request& r) {
    if (r.request_on_connection > 1)
      return FakeApiServer::Reply::of(FakeApiServer::Reply::Kind::close);
    return FakeApiServer::Reply::json(200, "{}");
  });
  auto transport = make_transport(io, plain_config(server));
  run_async(
      io,
      [&]() -> awaitable<void> {
        auto first = co_await transport->send(get("/api"));
        REQUIRE(first.ok());
        REQUIRE(transport->idle_connections() == 1);
        auto second = co_await transport->send(get("/api"));
        REQUIRE(second.ok());
        CHECK(second->status == 200);
      }(),
      [&] { server.stop(); });
  CHECK(server.requests() == 3);
  CHECK(server.connections() == 2);
}

TEST_CASE("a stale pooled connection is not retried for POST", "[http]") {
  asio::io_context io;
  FakeApiServer server(io, [](const FakeApiServer::Request& r) {
    if (r.request_on_connection > 1)
      return FakeApiServer::Reply::of(FakeApiServer::Reply::Kind::close);
    return FakeApiServer::Reply::json(201, "{}");
  });
  auto metrics = std::make_shared<kube::RequestMetrics>();
  auto transport = make_transport(io, plain_config(server), {}, metrics);
  run_async(
      io,
      [&]() -> awaitable<void> {
        auto first = co_await transport->send(post("/api/v1/namespaces/a/configmaps"));
        REQUIRE(first.ok());
        auto second = co_await transport->send(post("/api/v1/namespaces/a/configmaps"));
        REQUIRE_FALSE(second.ok());
        CHECK(second.error().is(Errc::unavailable));
        CHECK(second.error().http_status == 0);
        CHECK_THAT(second.error().message, Catch::Contains("POST /api/v1/namespaces/a/configmaps"));
      }(),
      [&] { server.stop(); });
  // The POST may have been applied by the server: it must not be sent twice.
  CHECK(server.requests() == 2);
  CHECK(server.connections() == 1);
  const std::string host = "127.0.0.1:" + std::to_string(server.port());
  CHECK(metrics->count("201", "POST", host) == 1);
  CHECK(metrics->count("<error>", "POST", host) == 1);
}

TEST_CASE("a 401 with a token file re-reads it and retries once", "[http]") {
  asio::io_context io;
  TempTokenFile file("old-token");
  FakeApiServer server(io, [&](const FakeApiServer::Request& r) {
    if (r.authorization == "Bearer new-token") return FakeApiServer::Reply::json(200, "{}");
    // The credential rotated on the server side: the file has the new one by now.
    file.write("new-token");
    return FakeApiServer::Reply::json(401,
                                      R"({"kind":"Status","code":401,"reason":"Unauthorized"})");
  });
  auto config = plain_config(server);
  config.token_file = file.path.string();
  auto transport = make_transport(io, config);
  run_async(
      io,
      [&]() -> awaitable<void> {
        auto res = co_await transport->send(get("/api"));
        REQUIRE(res.ok());
        CHECK(res->status == 200);
      }(),
      [&] { server.stop(); });
  REQUIRE(server.requests() == 2);
  CHECK(server.seen()[0].authorization == "Bearer old-token");
  CHECK(server.seen()[1].authorization == "Bearer new-token");
}

TEST_CASE("a 401 with a static token is returned without a retry", "[http]") {
  asio::io_context io;
  FakeApiServer server(io, [](const FakeApiServer::Request&) {
    return FakeApiServer::Reply::json(401, R"({"kind":"Status","code":401})");
  });
  auto config = plain_config(server);
  config.token = "static";
  auto transport = make_transport(io, config);
  run_async(
      io,
      [&]() -> awaitable<void> {
        auto res = co_await transport->send(get("/api"));
        REQUIRE(res.ok());
        CHECK(res->status == 401);
      }(),
      [&] { server.stop(); });
  REQUIRE(server.requests() == 1);
  CHECK(server.seen()[0].authorization == "Bearer static");
}

TEST_CASE("basic auth from username and password", "[http]") {
  const auto seen = one_get([](kube::RestConfig& config) {
    config.username = "admin";
    config.password = "secret";
  });
  CHECK(seen.authorization == "Basic YWRtaW46c2VjcmV0");
}

TEST_CASE("a server that never answers fails with timeout within the deadline", "[http]") {
  asio::io_context io;
  FakeApiServer server(io, [](const FakeApiServer::Request&) {
    return FakeApiServer::Reply::of(FakeApiServer::Reply::Kind::hang);
  });
  HttpTransport::Options options;
  options.request_timeout = 200ms;
  auto metrics = std::make_shared<kube::RequestMetrics>();
  auto transport = make_transport(io, plain_config(server), options, metrics);
  std::chrono::steady_clock::duration took{};
  run_async(
      io,
      [&]() -> awaitable<void> {
        const auto start = std::chrono::steady_clock::now();
        auto res = co_await transport->send(get("/api"));
        took = std::chrono::steady_clock::now() - start;
        REQUIRE_FALSE(res.ok());
        CHECK(res.error().is(Errc::timeout));
        // A timed-out GET is not a stale connection: no second attempt.
        CHECK(server.requests() == 1);
      }(),
      [&] { server.stop(); });
  CHECK(took >= 200ms);
  CHECK(took < 2s);
  CHECK(metrics->count("<error>", "GET", "127.0.0.1:" + std::to_string(server.port())) == 1);
  CHECK(transport->idle_connections() == 0);
}

TEST_CASE("connection refused is unavailable", "[http]") {
  asio::io_context io;
  // Reserve a port, then close it so nothing listens there.
  unsigned short port = 0;
  {
    asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
    port = a.local_endpoint().port();
  }
  kube::RestConfig config;
  config.scheme = "http";
  config.host = "127.0.0.1";
  config.port = std::to_string(port);
  auto transport = make_transport(io, config);
  run_async(io, [&]() -> awaitable<void> {
    auto res = co_await transport->send(get("/api"));
    REQUIRE_FALSE(res.ok());
    CHECK(res.error().is(Errc::unavailable));
    CHECK_THAT(res.error().message, Catch::Contains("connect to 127.0.0.1:" + config.port));
  }());
}

TEST_CASE("the server's base path prefixes every target", "[http]") {
  asio::io_context io;
  FakeApiServer server(
      io, [](const FakeApiServer::Request&) { return FakeApiServer::Reply::json(200, "{}"); });
  auto config = plain_config(server);
  config.base_path = "/k8s/clusters/c-1";
  auto transport = make_transport(io, config);
  run_async(
      io,
      [&]() -> awaitable<void> {
        auto res = co_await transport->send(get("/api/v1/pods"));
        REQUIRE(res.ok());
      }(),
      [&] { server.stop(); });
  REQUIRE(server.requests() == 1);
  CHECK(server.seen()[0].target == "/k8s/clusters/c-1/api/v1/pods");
}

TEST_CASE("a TLS handshake that never completes fails with timeout", "[http]") {
  asio::io_context io;
  // Accepts TCP connections but never speaks TLS: the client's handshake must not wait forever.
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  asio::ip::tcp::socket held(io);
  acceptor.async_accept(held, [](boost::system::error_code) {});
  kube::RestConfig config;
  config.host = "127.0.0.1";
  config.port = std::to_string(acceptor.local_endpoint().port());
  HttpTransport::Options options;
  options.handshake_timeout = 200ms;
  auto transport = make_transport(io, config, options);
  std::chrono::steady_clock::duration took{};
  run_async(
      io,
      [&]() -> awaitable<void> {
        const auto start = std::chrono::steady_clock::now();
        auto res = co_await transport->send(get("/api"));
        took = std::chrono::steady_clock::now() - start;
        REQUIRE_FALSE(res.ok());
        CHECK(res.error().is(Errc::timeout));
        CHECK_THAT(res.error().message, Catch::Contains("TLS handshake with 127.0.0.1:"));
      }(),
      [&] {
        boost::system::error_code ec;
        acceptor.close(ec);
        held.close(ec);
      });
  CHECK(took >= 200ms);
  CHECK(took < 2s);
}

TEST_CASE("impersonation sends Impersonate-* headers on every request and stream", "[http]") {
  asio::io_context io;
  FakeApiServer server(io, [](const FakeApiServer::Request& r) {
    if (r.target.find("watch=1") != std::string::npos) {
      return FakeApiServer::Reply::stream_of({});
    }
    return FakeApiServer::Reply::json(200, "{}");
  });
  auto config = plain_config(server);
  config.token = "t";
  config.impersonate.user = "system:serviceaccount:ns:sa";
  config.impersonate.uid = "1234";
  config.impersonate.groups = {"devs", "system:authenticated"};
  config.impersonate.extra = {{"scopes", {"view", "edit"}}, {"a/b%c d", {"x"}}};
  auto transport = make_transport(io, config);
  run_async(
      io,
      [&]() -> awaitable<void> {
        auto res = co_await transport->send(get("/api"));
        REQUIRE(res.ok());
        auto again = co_await transport->send(post("/api/v1/namespaces/ns/configmaps"));
        REQUIRE(again.ok());
        auto stream = co_await transport->open_stream(get("/api/v1/pods?watch=1"));
        REQUIRE(stream.ok());
        (*stream)->cancel();
      }(),
      [&] { server.stop(); });
  REQUIRE(server.requests() == 3);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"Impersonate-User", "system:serviceaccount:ns:sa"},
      {"Impersonate-Uid", "1234"},
      {"Impersonate-Group", "devs"},
      {"Impersonate-Group", "system:authenticated"},
      // client-go's headerKeyEscape: bytes that are not token characters, and '%', are encoded.
      {"Impersonate-Extra-a%2Fb%25c%20d", "x"},
      {"Impersonate-Extra-scopes", "view"},
      {"Impersonate-Extra-scopes", "edit"},
  };
  for (const auto& seen : server.seen()) {
    std::vector<std::pair<std::string, std::string>> got;
    for (const auto& h : seen.headers) {
      if (h.first.rfind("Impersonate-", 0) == 0) got.push_back(h);
    }
    CHECK(got == want);
    CHECK(seen.authorization == "Bearer t");
  }
}

TEST_CASE("no Impersonate-* header without impersonation", "[http]") {
  for (const auto& h : one_get([](kube::RestConfig&) {}).headers) {
    CHECK(h.first.rfind("Impersonate", 0) != 0);
  }
}
