// SPDX-License-Identifier: Apache-2.0
// Requests through an HTTP CONNECT proxy (kubeconfig proxy-url, HTTPS_PROXY).
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "../../../tools/tcp_splice.h"
#include "kube/config/config_error.h"
#include "kube/config/proxy_env.h"
#include "kube/http/http_transport.h"
#include "support/async_test.h"
#include "support/fake_api_server.h"
#include "support/http_test_support.h"
#include "support/local_listener.h"

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;
using kube::HttpTransport;
using kube::testing::FakeApiServer;
using kube::testing::get;
using kube::testing::run_async;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

// A tiny CONNECT proxy on 127.0.0.1: records each request head, answers `status`, and for 200
// splices the client to 127.0.0.1:<port of the CONNECT target>.
class ConnectProxy {
 public:
  ConnectProxy(asio::io_context& io, int status)
      : status_(status), listener_(io, [this](auto client) { return serve(client); }) {}
  unsigned short port() const { return listener_.port(); }
  const std::vector<std::string>& heads() const { return heads_; }
  void stop() { listener_.stop(); }

 private:
  awaitable<void> serve(std::shared_ptr<tcp::socket> client) {
    asio::streambuf in;
    auto [rec, n] = co_await asio::async_read_until(*client, in, "\r\n\r\n", kAwait);
    if (rec) co_return;
    std::string head(asio::buffers_begin(in.data()), asio::buffers_begin(in.data()) + n);
    heads_.push_back(head);
    if (status_ != 200) {
      const std::string no = "HTTP/1.1 " + std::to_string(status_) +
                             " Proxy Authentication Required\r\nContent-Length: 2\r\n\r\nno";
      co_await asio::async_write(*client, asio::buffer(no), kAwait);
      co_return;
    }
    // "CONNECT 127.0.0.1:PORT HTTP/1.1"
    const auto port = static_cast<unsigned short>(std::stoi(head.substr(head.find(':') + 1)));
    auto server = std::make_shared<tcp::socket>(client->get_executor());
    listener_.keep(server);
    auto [cec] = co_await server->async_connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), kAwait);
    if (cec) co_return;
    const std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
    co_await asio::async_write(*client, asio::buffer(ok), kAwait);
    asio::co_spawn(client->get_executor(), asop::test::splice(client, server), asio::detached);
    asio::co_spawn(client->get_executor(), asop::test::splice(server, client), asio::detached);
  }

  int status_;
  std::vector<std::string> heads_;
  kube::testing::LocalListener listener_;
};

}  // namespace

TEST_CASE("requests go through an HTTP CONNECT proxy, with its basic auth", "[http][proxy]") {
  asio::io_context io;
  FakeApiServer server(
      io, [](const FakeApiServer::Request&) { return FakeApiServer::Reply::json(200, "{}"); });
  ConnectProxy proxy(io, 200);
  auto config = kube::testing::plain_config(server.port());
  config.token = "t";
  config.proxy = kube::parse_proxy_url(
      "proxy-url", "http://user:p%40ss@127.0.0.1:" + std::to_string(proxy.port()));
  HttpTransport transport(io.get_executor(), config, {}, nullptr, nullptr);
  run_async(
      io,
      [&]() -> awaitable<void> {
        auto first = co_await transport.send(get("/api"));
        REQUIRE(first.ok());
        auto second = co_await transport.send(get("/apis"));  // the tunnel is kept alive
        REQUIRE(second.ok());
      }(),
      [&] {
        server.stop();
        proxy.stop();
      });
  REQUIRE(server.requests() == 2);
  CHECK(server.seen()[0].authorization == "Bearer t");  // the server's credential, inside
  REQUIRE(proxy.heads().size() == 1);
  const std::string& head = proxy.heads()[0];
  INFO(head);
  CHECK(head.starts_with("CONNECT 127.0.0.1:" + std::to_string(server.port()) + " HTTP/1.1\r\n"));
  // user:p@ss; the API server's token never goes to the proxy.
  CHECK(head.find("Proxy-Authorization: Basic dXNlcjpwQHNz\r\n") != std::string::npos);
  CHECK(head.find("Bearer") == std::string::npos);
}

TEST_CASE("a proxy that refuses CONNECT fails the request, naming proxy and status",
          "[http][proxy]") {
  asio::io_context io;
  ConnectProxy proxy(io, 407);
  const std::string proxy_port = std::to_string(proxy.port());
  auto config = kube::testing::plain_config(1);
  config.proxy = kube::parse_proxy_url("HTTPS_PROXY", "127.0.0.1:" + proxy_port);
  HttpTransport transport(io.get_executor(), config, {}, nullptr, nullptr);
  kube::ApiError error;
  run_async(
      io,
      [&]() -> awaitable<void> {
        auto res = co_await transport.send(get("/api"));
        REQUIRE_FALSE(res.ok());
        error = res.error();
      }(),
      [&] { proxy.stop(); });
  INFO(error.describe());
  CHECK(error.is(kube::Errc::unavailable));
  CHECK(error.message.find("CONNECT 127.0.0.1:1 via proxy 127.0.0.1:" + proxy_port +
                           " (HTTPS_PROXY) answered 407") != std::string::npos);
}

TEST_CASE("proxy URLs: http only, default port, user info decoded", "[http][proxy]") {
  const auto p = kube::parse_proxy_url("proxy-url", "proxy.corp");
  CHECK(p.host == "proxy.corp");
  CHECK(p.port == "80");
  CHECK(p.authorization.empty());
  const auto v6 = kube::parse_proxy_url("HTTPS_PROXY", "http://[fd00::1]:3128/");
  CHECK(v6.host == "fd00::1");
  CHECK(v6.port == "3128");
  CHECK(v6.source == "HTTPS_PROXY");
  const auto error = [](const std::string& url) {
    try {
      kube::parse_proxy_url("proxy-url", url);
    } catch (const kube::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("socks5://u:pa55word@p:1080") ==
        "proxy-url names a socks5 proxy: scheme socks5 is not supported (only http:// proxies, "
        "through CONNECT)");
  CHECK(error("https://p") ==
        "proxy-url names an https proxy: scheme https is not supported (only http:// proxies, "
        "through CONNECT)");
  CHECK(error("http://u:pa55%zz@p") ==
        "proxy-url is not a valid http proxy URL: invalid percent-encoding in the user info");
  CHECK(error("http://p:99999") == "proxy-url is not a valid http proxy URL: invalid port");
  CHECK(error("http://p/path") ==
        "proxy-url is not a valid http proxy URL: a path, query or fragment is not allowed");
  CHECK(error("http://") == "proxy-url is not a valid http proxy URL: no host");
}
