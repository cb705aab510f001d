// SPDX-License-Identifier: Apache-2.0
#include "ctrl/serve/probe_metrics_server.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "ctrl/base/clock.h"
#include "ctrl/metrics/metrics_registry.h"
#include "ctrl/metrics/rest_client_metrics.h"
#include "ctrl/serve/bind_address.h"
#include "kube/http/request_metrics.h"
#include "support/async_test.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::ip::tcp;
using ctrl::ProbeMetricsServer;
using kube::testing::run_async;
using namespace std::chrono_literals;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
using Response = http::response<http::string_body>;

// One client connection to the server under test.
class Client {
 public:
  explicit Client(asio::any_io_executor ex) : stream_(ex) {}

  awaitable<void> connect(unsigned short port) {
    stream_.expires_after(5s);
    auto [ec] = co_await stream_.async_connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), kAwait);
    REQUIRE_FALSE(ec);
  }

  // Sends a request and reads the response on this connection.
  awaitable<Response> get(std::string target, http::verb verb = http::verb::get,
                          bool keep_alive = true) {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.keep_alive(keep_alive);
    stream_.expires_after(5s);
    auto [wec, wn] = co_await http::async_write(stream_, req, kAwait);
    REQUIRE_FALSE(wec);
    co_return co_await read();
  }

  awaitable<Response> read(bool head = false) {
    http::response_parser<http::string_body> parser;
    parser.skip(head);
    stream_.expires_after(5s);
    auto [ec, n] = co_await http::async_read(stream_, buffer_, parser, kAwait);
    INFO(ec.message());
    REQUIRE_FALSE(ec);
    co_return parser.release();
  }

  awaitable<void> send_raw(std::string raw) {
    stream_.expires_after(5s);
    auto [ec, n] = co_await asio::async_write(stream_, asio::buffer(raw), kAwait);
    REQUIRE_FALSE(ec);
  }

  // Waits for the server to close the connection; the error the read ended with.
  awaitable<boost::system::error_code> read_until_closed(std::chrono::milliseconds limit) {
    char buf[256];
    stream_.expires_after(limit);
    for (;;) {
      auto [ec, n] = co_await stream_.async_read_some(asio::buffer(buf), kAwait);
      if (ec) co_return ec;
    }
  }

 private:
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
};

ProbeMetricsServer::Options local_options() {
  ProbeMetricsServer::Options o;
  o.bind_address = "127.0.0.1:0";
  return o;
}

// Waits on the loop (never blocking it) until `done` or the deadline; whether `done` held.
awaitable<bool> eventually(std::function<bool()> done, std::chrono::milliseconds limit = 3s) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) co_return false;
    timer.expires_after(10ms);
    co_await timer.async_wait(kAwait);
  }
  co_return true;
}

std::string content_type(const Response& r) {
  return std::string(r[http::field::content_type]);
}

}  // namespace

TEST_CASE("bind addresses follow controller-runtime's flags", "[health]") {
  CHECK_FALSE(ctrl::parse_bind_address("0").has_value());
  auto all = ctrl::parse_bind_address(":8080");
  REQUIRE(all);
  CHECK(all->port() == 8080);
  CHECK(all->address().is_unspecified());
  auto local = ctrl::parse_bind_address("127.0.0.1:8081");
  REQUIRE(local);
  CHECK(local->address().to_string() == "127.0.0.1");
  CHECK(local->port() == 8081);
  auto v6 = ctrl::parse_bind_address("[::1]:0");
  REQUIRE(v6);
  CHECK(v6->address().to_string() == "::1");
  CHECK(v6->port() == 0);
  CHECK(ctrl::parse_bind_address("localhost:9")->address().is_loopback());
  for (const char* bad : {"", "8080", "abc:80", ":99999", ":-1", ":80x", "::1:80",
                          "1.2.3.4:", "[127.0.0.1]:80", "1.2.3:80"}) {
    INFO(bad);
    CHECK_THROWS_AS(ctrl::parse_bind_address(bad), std::invalid_argument);
  }
}

TEST_CASE("/healthz is ok on a live loop, /metrics renders the registry, others 404", "[health]") {
  asio::io_context io;
  ctrl::RealClock clock;
  ctrl::MetricsRegistry registry;
  registry
      .counter("controller_runtime_reconcile_total", "Total reconciles.",
               {{"controller", "appservice"}, {"result", "success"}})
      .inc(3);
  auto requests = std::make_shared<kube::RequestMetrics>();
  requests->record(200, "GET", "10.0.0.1:6443");
  requests->record(200, "GET", "10.0.0.1:6443");
  requests->record(409, "PUT", "10.0.0.1:6443");
  ctrl::register_rest_client_metrics(registry, requests);

  ProbeMetricsServer server(io.get_executor(), local_options(), clock, &registry);
  server.start();
  REQUIRE(server.enabled());
  REQUIRE(server.port() != 0);
  run_async(
      io,
      [&]() -> awaitable<void> {
        Client c(io.get_executor());
        co_await c.connect(server.port());
        auto healthz = co_await c.get("/healthz");
        CHECK(healthz.result() == http::status::ok);
        CHECK(healthz.body() == "ok");
        CHECK(content_type(healthz) == "text/plain; charset=utf-8");
        CHECK(healthz.keep_alive());

        // Same connection (keep-alive): the metrics.
        auto metrics = co_await c.get("/metrics");
        CHECK(metrics.result() == http::status::ok);
        CHECK(content_type(metrics) == std::string(ctrl::MetricsRegistry::kContentType));
        CHECK_THAT(metrics.body(),
                   Catch::Contains("controller_runtime_reconcile_total{controller=\"appservice\","
                                   "result=\"success\"} 3\n"));
        CHECK_THAT(metrics.body(),
                   Catch::Contains("# TYPE rest_client_requests_total counter\n"
                                   "rest_client_requests_total{code=\"200\",host=\"10.0.0.1:6443\","
                                   "method=\"GET\"} 2\n"
                                   "rest_client_requests_total{code=\"409\",host=\"10.0.0.1:6443\","
                                   "method=\"PUT\"} 1\n"));
        // Counted at scrape time, not at registration.
        requests->record(200, "GET", "10.0.0.1:6443");
        auto again = co_await c.get("/metrics?x=1");
        CHECK_THAT(again.body(), Catch::Contains("method=\"GET\"} 3\n"));

        auto missing = co_await c.get("/nope");
        CHECK(missing.result() == http::status::not_found);
        auto missing_check = co_await c.get("/healthz/no-such-check");
        CHECK(missing_check.result() == http::status::not_found);
        auto post = co_await c.get("/healthz", http::verb::post);
        CHECK(post.result() == http::status::method_not_allowed);
        CHECK(post[http::field::allow] == "GET, HEAD");
        CHECK(server.open_connections() == 1);

        // HEAD: the headers of a GET, no body.
        co_await c.send_raw("HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        auto head_res = co_await c.read(true);
        CHECK(head_res.result() == http::status::ok);
        CHECK(head_res[http::field::content_length] == "2");
        CHECK(head_res.body().empty());

        // Connection: close is honoured.
        auto last = co_await c.get("/healthz", http::verb::get, false);
        CHECK_FALSE(last.keep_alive());
        auto closed = co_await c.read_until_closed(2s);
        CHECK(closed == asio::error::eof);
      }(),
      [&] { server.stop(); });
}

TEST_CASE("/healthz fails with 500 once the heartbeat is older than the threshold", "[health]") {
  asio::io_context io;
  ctrl::FakeClock clock;
  auto options = local_options();
  options.heartbeat_interval = 1h;  // the ticker stamps once at start, then not within this test
  options.stall_threshold = 10s;
  ProbeMetricsServer server(io.get_executor(), options, clock, nullptr);
  server.start();
  run_async(
      io,
      [&]() -> awaitable<void> {
        Client c(io.get_executor());
        co_await c.connect(server.port());
        clock.step(10s);  // exactly the threshold: still fine
        auto ok = co_await c.get("/healthz");
        CHECK(ok.result() == http::status::ok);

        clock.step(1500ms);
        auto stalled = co_await c.get("/healthz");
        CHECK(stalled.result() == http::status::internal_server_error);
        CHECK_THAT(stalled.body(),
                   Catch::Contains("[-]event-loop failed: no event loop heartbeat for 11.5s"));
        CHECK_THAT(stalled.body(), Catch::EndsWith("healthz check failed\n"));
        auto single = co_await c.get("/healthz/event-loop");
        CHECK(single.result() == http::status::internal_server_error);
        // No metrics registry: /metrics is not served.
        auto metrics = co_await c.get("/metrics");
        CHECK(metrics.result() == http::status::not_found);
      }(),
      [&] { server.stop(); });
}

TEST_CASE("the heartbeat ticker keeps /healthz ok as time passes", "[health]") {
  asio::io_context io;
  ctrl::FakeClock clock;
  auto options = local_options();
  options.heartbeat_interval = 20ms;
  ProbeMetricsServer server(io.get_executor(), options, clock, nullptr);
  server.start();
  run_async(
      io,
      [&]() -> awaitable<void> {
        CHECK(server.last_heartbeat() == clock.now());
        clock.step(30s);
        // The next tick stamps the new (fake) time: the loop is live, so it recovers.
        CHECK(co_await eventually([&] { return server.last_heartbeat() == clock.now(); }));
        Client c(io.get_executor());
        co_await c.connect(server.port());
        auto res = co_await c.get("/healthz");
        CHECK(res.result() == http::status::ok);
      }(),
      [&] { server.stop(); });
}

TEST_CASE("/readyz is 503 naming the failing check until it passes", "[health]") {
  asio::io_context io;
  ctrl::RealClock clock;
  ProbeMetricsServer server(io.get_executor(), local_options(), clock, nullptr);
  bool synced = false;
  server.add_readyz_check("informer-sync", [&] { return synced; });
  server.add_readyz_check("always", [] { return true; });
  server.add_readyz_check("throws", [&]() -> bool {
    if (!synced) throw std::runtime_error("boom");
    return true;
  });
  server.add_healthz_check("ping", [] { return true; });
  server.start();
  run_async(
      io,
      [&]() -> awaitable<void> {
        Client c(io.get_executor());
        co_await c.connect(server.port());
        auto not_ready = co_await c.get("/readyz");
        CHECK(not_ready.result() == http::status::service_unavailable);
        CHECK(not_ready.body() ==
              "[-]informer-sync failed\n[-]throws failed\nreadyz check failed\n");
        auto one = co_await c.get("/readyz/always");
        CHECK(one.result() == http::status::ok);
        auto other = co_await c.get("/readyz/informer-sync");
        CHECK(other.result() == http::status::service_unavailable);
        // Readiness never affects liveness.
        auto healthz = co_await c.get("/healthz");
        CHECK(healthz.result() == http::status::ok);

        synced = true;
        auto ready = co_await c.get("/readyz/");
        CHECK(ready.result() == http::status::ok);
        CHECK(ready.body() == "ok");
      }(),
      [&] { server.stop(); });
}

TEST_CASE("oversized and idle clients are cut off, stop() closes connections", "[health]") {
  asio::io_context io;
  ctrl::RealClock clock;
  auto options = local_options();
  options.read_timeout = 300ms;
  ProbeMetricsServer server(io.get_executor(), options, clock, nullptr);
  server.start();
  const auto port = server.port();
  run_async(
      io,
      [&]() -> awaitable<void> {
        // A header over the limit: 431 and the connection closes.
        Client big(io.get_executor());
        co_await big.connect(port);
        co_await big.send_raw("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " +
                              std::string(16 * 1024, 'a') + "\r\n\r\n");
        auto too_large = co_await big.read();
        CHECK(too_large.result() == http::status::request_header_fields_too_large);
        CHECK_FALSE(too_large.keep_alive());

        // A body over the limit: 413.
        Client body(io.get_executor());
        co_await body.connect(port);
        co_await body.send_raw(
            "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n");
        auto payload = co_await body.read();
        CHECK(payload.result() == http::status::payload_too_large);

        // A client that sends half a request and stalls is closed after read_timeout.
        Client slow(io.get_executor());
        co_await slow.connect(port);
        co_await slow.send_raw("GET /heal");
        const auto start = std::chrono::steady_clock::now();
        auto ec = co_await slow.read_until_closed(5s);
        const auto took = std::chrono::steady_clock::now() - start;
        CHECK(ec == asio::error::eof);
        CHECK(took >= 250ms);
        CHECK(took < 4s);

        // stop(): an idle keep-alive connection is closed and the listener is gone.
        Client idle(io.get_executor());
        co_await idle.connect(port);
        auto res = co_await idle.get("/healthz");
        CHECK(res.result() == http::status::ok);
        CHECK(co_await eventually([&] { return server.open_connections() == 1; }));
        server.stop();
        auto closed = co_await idle.read_until_closed(2s);
        CHECK((closed == asio::error::eof || closed == asio::error::connection_reset));
        CHECK(co_await eventually([&] { return server.open_connections() == 0; }));
        CHECK(server.port() == 0);
        beast::tcp_stream refused(io.get_executor());
        refused.expires_after(2s);
        auto [cec] = co_await refused.async_connect(
            tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), kAwait);
        CHECK(cec == asio::error::connection_refused);
      }(),
      [&] { server.stop(); });
}

TEST_CASE("a disabled server binds nothing, a port in use fails at start", "[health]") {
  asio::io_context io;
  ctrl::RealClock clock;
  ProbeMetricsServer::Options off;
  off.bind_address = "0";
  ProbeMetricsServer disabled(io.get_executor(), off, clock, nullptr);
  disabled.start();
  CHECK_FALSE(disabled.enabled());
  CHECK(disabled.port() == 0);

  ProbeMetricsServer first(io.get_executor(), local_options(), clock, nullptr);
  first.start();
  auto taken = local_options();
  taken.bind_address = "127.0.0.1:" + std::to_string(first.port());
  ProbeMetricsServer second(io.get_executor(), taken, clock, nullptr);
  CHECK_THROWS_AS(second.start(), boost::system::system_error);
  first.stop();
  io.run_for(100ms);
}

TEST_CASE("a client holding every connection cannot lock the probes out", "[health]") {
  asio::io_context io;
  ctrl::RealClock clock;
  auto options = local_options();
  options.max_connections = 8;
  options.max_connections_per_peer = 6;
  ProbeMetricsServer server(io.get_executor(), options, clock, nullptr);
  server.start();
  const auto port = server.port();
  run_async(
      io,
      [&]() -> awaitable<void> {
        // 40 connections that never send a byte, and one that sent half a request.
        std::vector<std::unique_ptr<Client>> hogs;
        auto half = std::make_unique<Client>(io.get_executor());
        co_await half->connect(port);
        co_await half->send_raw("GET /heal");
        for (int i = 0; i < 40; ++i) {
          hogs.push_back(std::make_unique<Client>(io.get_executor()));
          co_await hogs.back()->connect(port);
        }
        // One peer (all of this is 127.0.0.1) holds at most its share.
        CHECK(co_await eventually([&] { return server.open_connections() <= 6; }));
        CHECK(server.open_connections() >= 1);
        // The half-read connection was the oldest: it went first.
        auto ec = co_await half->read_until_closed(2s);
        CHECK((ec == asio::error::eof || ec == asio::error::connection_reset));
        // Probes as the kubelet makes them (timeoutSeconds 1 s, failureThreshold 3, its defaults
        // and deploy/base/operator.yaml's): every one answers 200, and never 3 in a row are late,
        // which is when the kubelet would act; one late answer on a loaded machine is not.
        int late_in_a_row = 0;
        int most_late_in_a_row = 0;
        for (int i = 0; i < 10; ++i) {
          Client probe(io.get_executor());
          co_await probe.connect(port);
          const auto start = std::chrono::steady_clock::now();
          auto res = co_await probe.get("/healthz", http::verb::get, false);
          CHECK(res.result() == http::status::ok);
          late_in_a_row = std::chrono::steady_clock::now() - start < 1s ? 0 : late_in_a_row + 1;
          most_late_in_a_row = std::max(most_late_in_a_row, late_in_a_row);
        }
        CHECK(most_late_in_a_row < 3);
      }(),
      [&] { server.stop(); });
}
