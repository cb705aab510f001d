// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <vector>

#include "kube/http/http_connection.h"
#include "kube/http/http_transport.h"
#include "support/async_test.h"
#include "support/fake_api_server.h"
#include "support/http_test_support.h"

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::awaitable;
using asio::ip::tcp;
using kube::HttpRequest;
using kube::HttpTransport;
using kube::testing::FakeApiServer;
using kube::testing::run_async;
using namespace std::chrono_literals;

namespace {

// A listener that answers no SYN: backlog 0, its accept queue filled and never drained, so the
// kernel drops further SYNs and a connect hangs as on a dead address.
struct BlackholeListener {
  BlackholeListener() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 0) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    for (int i = 0; i < 3; ++i) {
      int c = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      ::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a);
      fillers.push_back(c);
    }
  }
  ~BlackholeListener() {
    for (int c : fillers) ::close(c);
    ::close(fd);
  }
  int fd = -1;
  unsigned short port = 0;
  std::vector<int> fillers;
};

HttpRequest get(std::string target) {
  HttpRequest r;
  r.method = http::verb::get;
  r.target = std::move(target);
  return r;
}

}  // namespace

TEST_CASE("connect: an address that drops SYNs gets its share of the deadline, then the next",
          "[http]") {
  asio::io_context io;
  BlackholeListener dead;
  tcp::acceptor alive(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const auto loopback = asio::ip::make_address("127.0.0.1");
  const std::vector<tcp::endpoint> addresses = {
      tcp::endpoint(loopback, dead.port), tcp::endpoint(loopback, alive.local_endpoint().port())};
  run_async(
      io,
      [&]() -> awaitable<void> {
        boost::beast::tcp_stream stream(io.get_executor());
        const auto start = std::chrono::steady_clock::now();
        const auto ec = co_await kube::connect_any(stream, addresses, 8s);
        const auto took = std::chrono::steady_clock::now() - start;
        INFO(ec.message());
        CHECK_FALSE(ec);    // the whole 8 s on the dead address would have been a timeout
        CHECK(took >= 3s);  // the dead address had its 4 s share
        CHECK(took < 7s);
      }(),
      [] {}, 15s);
}

TEST_CASE("a burst of requests queues for max_requests_in_flight connections", "[http]") {
  asio::io_context io;
  FakeApiServer server(
      io, [](const FakeApiServer::Request&) { return FakeApiServer::Reply::json(200, "{}"); });
  HttpTransport::Options options;
  options.max_requests_in_flight = 4;
  auto transport = std::make_shared<HttpTransport>(
      io.get_executor(), kube::testing::plain_config(server.port()), options, nullptr, nullptr);
  int ok = 0;
  run_async(
      io,
      [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        for (int i = 0; i < 40; ++i) {
          asio::co_spawn(
              ex,
              [&]() -> awaitable<void> {
                auto res = co_await transport->send(get("/api"));
                if (res.ok()) ++ok;
              },
              asio::detached);
        }
        while (ok < 40) co_await asio::post(ex, asio::use_awaitable);
      }(),
      [&] { server.stop(); });
  CHECK(ok == 40);
  CHECK(transport->max_requests_seen() == 4);
  CHECK(server.connections() <= 4);
  CHECK(transport->connections_opened() <= 4);
}
