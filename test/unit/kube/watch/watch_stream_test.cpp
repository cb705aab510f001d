// SPDX-License-Identifier: Apache-2.0
#include "kube/watch/watch_stream.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>
#include <chrono>

#include "kube/http/http_stream.h"
#include "support/async_test.h"
#include "support/fake_api_server.h"

namespace asio = boost::asio;
using asio::awaitable;
using kube::Errc;
using kube::HttpTransport;
using kube::ResourcePath;
using kube::WatchEvent;
using kube::WatchOptions;
using kube::WatchStream;
using kube::testing::FakeApiServer;
using kube::testing::run_async;
using namespace std::chrono_literals;

namespace {

std::shared_ptr<HttpTransport> make_transport(asio::io_context& io, const FakeApiServer& server) {
  kube::RestConfig c;
  c.scheme = "http";
  c.host = "127.0.0.1";
  c.port = std::to_string(server.port());
  return std::make_shared<HttpTransport>(io.get_executor(), c, HttpTransport::Options{}, nullptr,
                                         nullptr);
}

std::string event(std::string_view type, std::string_view name, std::string_view rv) {
  return R"({"type":")" + std::string(type) +
         R"(","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":")" +
         std::string(name) + R"(","resourceVersion":")" + std::string(rv) + R"("}}})" + "\n";
}

std::string name_of(const WatchEvent& ev) {
  return (*ev.object)["metadata"]["name"].GetString();
}

const auto kConfigMaps = ResourcePath::from_api_version("v1", "configmaps").in_namespace("ns");

}  // namespace

TEST_CASE("watch query carries watch, resourceVersion, timeout, bookmarks, selectors",
          "[http][watch]") {
  WatchOptions o;
  o.resource_version = "123";
  o.timeout_seconds = 417;
  o.label_selector = "app.kubernetes.io/managed-by=appservice-operator";
  CHECK(WatchStream::query(o).str() ==
        "watch=1&resourceVersion=123&timeoutSeconds=417&allowWatchBookmarks=true&labelSelector="
        "app.kubernetes.io%2Fmanaged-by%3Dappservice-operator");
  o.allow_watch_bookmarks = false;
  o.label_selector.clear();
  o.resource_version.clear();
  o.timeout_seconds = 0;
  CHECK(WatchStream::query(o).str() == "watch=1");
}

TEST_CASE("a chunked watch body split mid-line yields every event in order", "[http][watch]") {
  asio::io_context io;
  const std::string body = event("ADDED", "a", "11") + event("MODIFIED", "a", "12") +
                           event("BOOKMARK", "", "13") + event("DELETED", "a", "14");
  // Chunks of 7 bytes: boundaries fall inside JSON strings, between events and mid-"\n".
  std::vector<std::string> chunks;
  for (std::size_t i = 0; i < body.size(); i += 7) chunks.push_back(body.substr(i, 7));
  FakeApiServer server(
      io, [&](const FakeApiServer::Request&) { return FakeApiServer::Reply::stream_of(chunks); });
  auto transport = make_transport(io, server);
  run_async(
      io,
      [&]() -> awaitable<void> {
        WatchOptions o;
        o.resource_version = "10";
        o.timeout_seconds = 300;
        auto w = co_await WatchStream::open(*transport, kConfigMaps, o);
        REQUIRE(w.ok());
        std::vector<std::pair<WatchEvent::Type, std::string>> got;
        for (;;) {
          auto ev = co_await (*w)->next();
          REQUIRE(ev.ok());
          if (!*ev) break;  // clean end of stream
          got.emplace_back((*ev)->type, (*ev)->resource_version);
        }
        const std::vector<std::pair<WatchEvent::Type, std::string>> want{
            {WatchEvent::Type::added, "11"},
            {WatchEvent::Type::modified, "12"},
            {WatchEvent::Type::bookmark, "13"},
            {WatchEvent::Type::deleted, "14"}};
        CHECK(got == want);
        CHECK((*w)->resource_version() == "14");
        CHECK((*w)->events() == 4);
        // Still ended on a second call.
        auto after = co_await (*w)->next();
        REQUIRE(after.ok());
        CHECK_FALSE(after->has_value());
      }(),
      [&] { server.stop(); });
  REQUIRE(server.requests() == 1);
  CHECK(server.seen()[0].target ==
        "/api/v1/namespaces/ns/configmaps?watch=1&resourceVersion=10&timeoutSeconds=300&"
        "allowWatchBookmarks=true");
}

TEST_CASE("an event many times the stream's read chunk arrives whole", "[http][watch]") {
  // Each watch stream keeps one read chunk for as long as it is open, three for this operator:
  // 64 KiB each, zeroed, before it was cut. An object of several chunks must still arrive whole.
  CHECK(sizeof(kube::HttpStream) < 24 * 1024);
  asio::io_context io;
  const std::string big(300 * 1024, 'x');
  const std::string body = event("ADDED", big, "11") + event("MODIFIED", "a", "12");
  FakeApiServer server(
      io, [&](const FakeApiServer::Request&) { return FakeApiServer::Reply::stream_of({body}); });
  auto transport = make_transport(io, server);
  run_async(
      io,
      [&]() -> awaitable<void> {
        auto w = co_await WatchStream::open(*transport, kConfigMaps, WatchOptions{});
        REQUIRE(w.ok());
        auto first = co_await (*w)->next();
        REQUIRE(first.ok());
        REQUIRE(first->has_value());
        CHECK(name_of(**first) == big);
        auto second = co_await (*w)->next();
        REQUIRE(second.ok());
        REQUIRE(second->has_value());
        CHECK(name_of(**second) == "a");
      }(),
      [&] { server.stop(); });
}

TEST_CASE("every event sent before a quiet spell arrives, wherever the read chunk cuts them",
          "[http][watch]") {
  // A live watch goes quiet after a burst. An event left in the connection's buffer, behind a
  // full read chunk, would wait for the next byte from the server: here, for the idle deadline.
  asio::io_context io;
  std::string body;
  constexpr int kEvents = 150;
  for (int i = 0; i < kEvents; ++i) {
    body += event("MODIFIED", "cm-" + std::to_string(i) + "-" + std::string(2900 + 37 * i, 'y'),
                  std::to_string(100 + i));
  }
  // HTTP chunks of varying sizes, none a multiple of the read chunk.
  std::vector<std::string> chunks;
  const std::size_t sizes[] = {5003, 17011, 40009, 16383, 1};
  for (std::size_t at = 0, n = 0; at < body.size(); at += sizes[n++ % 5]) {
    chunks.push_back(body.substr(at, sizes[n % 5]));
  }
  FakeApiServer server(io, [&](const FakeApiServer::Request&) {
    return FakeApiServer::Reply::stream_of(chunks, /*stall=*/true);
  });
  auto transport = make_transport(io, server);
  run_async(
      io,
      [&]() -> awaitable<void> {
        WatchOptions o;
        o.idle_timeout = 2s;
        auto w = co_await WatchStream::open(*transport, kConfigMaps, o);
        REQUIRE(w.ok());
        for (int i = 0; i < kEvents; ++i) {
          auto ev = co_await (*w)->next();
          REQUIRE(ev.ok());
          REQUIRE(ev->has_value());
          REQUIRE((*ev)->resource_version == std::to_string(100 + i));
        }
      }(),
      [&] { server.stop(); });
}

TEST_CASE("a stalled watch fails with timeout after the read-idle deadline", "[http][watch]") {
  asio::io_context io;
  FakeApiServer server(io, [&](const FakeApiServer::Request&) {
    // Half-open: the connection stays up but nothing more arrives
    return FakeApiServer::Reply::stream_of({event("ADDED", "a", "5")}, /*stall=*/true);
  });
  auto transport = make_transport(io, server);
  std::chrono::steady_clock::duration took{};
  run_async(
      io,
      [&]() -> awaitable<void> {
        WatchOptions o;
        o.idle_timeout = 300ms;
        auto w = co_await WatchStream::open(*transport, kConfigMaps, o);
        REQUIRE(w.ok());
        auto first = co_await (*w)->next();
        REQUIRE(first.ok());
        REQUIRE(first->has_value());
        CHECK(name_of(**first) == "a");
        const auto start = std::chrono::steady_clock::now();
        auto second = co_await (*w)->next();
        took = std::chrono::steady_clock::now() - start;
        REQUIRE_FALSE(second.ok());
        CHECK(second.error().is(Errc::timeout));
        CHECK((*w)->resource_version() == "5");
      }(),
      [&] { server.stop(); });
  CHECK(took >= 300ms);
  CHECK(took < 3s);
}

TEST_CASE("a watch with bookmarks is presumed dead after 90 s of silence, whatever its timeout",
          "[http][watch]") {
  // The API server sends a BOOKMARK about once a minute: a stalled proxy (which still answers TCP
  // keepalive) must be noticed within a minute and a half, not timeoutSeconds (up to 10 min) later.
  WatchOptions o;
  o.timeout_seconds = 600;
  CHECK(WatchStream::idle_timeout_for(o) == 90s);
  o.timeout_seconds = 0;
  CHECK(WatchStream::idle_timeout_for(o) == 90s);
  o.timeout_seconds = 20;  // a short watch ends sooner on its own
  CHECK(WatchStream::idle_timeout_for(o) == 50s);
  // Without bookmarks a quiet watch is legitimately silent until its timeout.
  o.allow_watch_bookmarks = false;
  o.timeout_seconds = 600;
  CHECK(WatchStream::idle_timeout_for(o) == 630s);
  o.timeout_seconds = 0;
  CHECK(WatchStream::idle_timeout_for(o) == 5min);
  o.idle_timeout = 1500ms;  // an explicit bound wins
  CHECK(WatchStream::idle_timeout_for(o) == 1500ms);
}

TEST_CASE("cancel() ends a pending watch read promptly", "[http][watch]") {
  asio::io_context io;
  FakeApiServer server(io, [&](const FakeApiServer::Request&) {
    return FakeApiServer::Reply::stream_of({event("ADDED", "a", "5")}, /*stall=*/true);
  });
  auto transport = make_transport(io, server);
  run_async(
      io,
      [&]() -> awaitable<void> {
        WatchOptions o;
        o.idle_timeout = 30s;  // far beyond the test's deadline: only cancel() can end the read
        auto w = co_await WatchStream::open(*transport, kConfigMaps, o);
        REQUIRE(w.ok());
        auto first = co_await (*w)->next();
        REQUIRE(first.ok());
        auto ex = co_await asio::this_coro::executor;
        // Runs once next() below has suspended on the socket.
        asio::post(ex, [&] { (*w)->cancel(); });
        auto ev = co_await (*w)->next();
        REQUIRE_FALSE(ev.ok());
        CHECK((*w)->cancelled());
      }(),
      [&] { server.stop(); }, 10s);
}

TEST_CASE("HTTP 410 on open is gone", "[http][watch]") {
  asio::io_context io;
  FakeApiServer server(io, [&](const FakeApiServer::Request&) {
    return FakeApiServer::Reply::json(410, R"json({"kind":"Status","apiVersion":"v1",
        "status":"Failure","message":"too old resource version: 1 (50)","reason":"Expired",
        "code":410})json");
  });
  auto transport = make_transport(io, server);
  run_async(
      io,
      [&]() -> awaitable<void> {
        WatchOptions o;
        o.resource_version = "1";
        auto w = co_await WatchStream::open(*transport, kConfigMaps, o);
        REQUIRE_FALSE(w.ok());
        CHECK(w.error().is(Errc::gone));
        CHECK(w.error().http_status == 410);
        CHECK(w.error().message == "too old resource version: 1 (50)");
      }(),
      [&] { server.stop(); });
}

TEST_CASE("an ERROR event with 410 inside a 200 stream is gone", "[http][watch]") {
  asio::io_context io;
  FakeApiServer server(io, [&](const FakeApiServer::Request&) {
    return FakeApiServer::Reply::stream_of(
        {event("ADDED", "a", "7"),
         R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",)json"
         R"json("message":"too old resource version: 7 (90)","reason":"Expired","code":410}})json"
         "\n"});
  });
  auto transport = make_transport(io, server);
  run_async(
      io,
      [&]() -> awaitable<void> {
        auto w = co_await WatchStream::open(*transport, kConfigMaps, WatchOptions{});
        REQUIRE(w.ok());
        auto first = co_await (*w)->next();
        REQUIRE(first.ok());
        REQUIRE(first->has_value());
        auto second = co_await (*w)->next();
        REQUIRE_FALSE(second.ok());
        CHECK(second.error().is(Errc::gone));
        CHECK((*w)->resource_version() == "7");
        // The failure sticks.
        auto third = co_await (*w)->next();
        REQUIRE_FALSE(third.ok());
        CHECK(third.error().is(Errc::gone));
      }(),
      [&] { server.stop(); });
}

TEST_CASE("an undecodable line fails the watch instead of skipping an event", "[http][watch]") {
  asio::io_context io;
  FakeApiServer server(io, [&](const FakeApiServer::Request&) {
    return FakeApiServer::Reply::stream_of({"{not json}\n", event("ADDED", "b", "8")});
  });
  auto transport = make_transport(io, server);
  run_async(
      io,
      [&]() -> awaitable<void> {
        auto w = co_await WatchStream::open(*transport, kConfigMaps, WatchOptions{});
        REQUIRE(w.ok());
        auto ev = co_await (*w)->next();
        REQUIRE_FALSE(ev.ok());
        CHECK(ev.error().is(Errc::unknown));
        CHECK_THAT(ev.error().message, Catch::Contains("line 1"));
      }(),
      [&] { server.stop(); });
}

TEST_CASE("a cleanly finished stream returns its connection to the pool", "[http][watch]") {
  asio::io_context io;
  FakeApiServer server(io, [&](const FakeApiServer::Request& r) {
    if (r.target.find("watch=1") == std::string::npos) return FakeApiServer::Reply::json(200, "{}");
    FakeApiServer::Reply reply = FakeApiServer::Reply::of(FakeApiServer::Reply::Kind::stream);
    reply.chunks = {event("ADDED", "a", "3")};
    return reply;
  });
  auto transport = make_transport(io, server);
  run_async(
      io,
      [&]() -> awaitable<void> {
        {
          auto w = co_await WatchStream::open(*transport, kConfigMaps, WatchOptions{});
          REQUIRE(w.ok());
          while (true) {
            auto ev = co_await (*w)->next();
            REQUIRE(ev.ok());
            if (!*ev) break;
          }
        }
        CHECK(transport->idle_connections() == 1);
        kube::HttpRequest get;
        get.target = "/api";
        auto res = co_await transport->send(get);
        REQUIRE(res.ok());
      }(),
      [&] { server.stop(); });
  CHECK(server.connections() == 1);
}

TEST_CASE("a streaming list's watch asks for initial events not older than its resourceVersion",
          "[http][watch]") {
  WatchOptions o;
  o.timeout_seconds = 300;
  o.send_initial_events = true;
  // client-go's reflector.watchList: a consistent snapshot (no resourceVersion), bookmarks on.
  CHECK(WatchStream::query(o).str() ==
        "watch=1&timeoutSeconds=300&allowWatchBookmarks=true&sendInitialEvents=true&"
        "resourceVersionMatch=NotOlderThan");
}
