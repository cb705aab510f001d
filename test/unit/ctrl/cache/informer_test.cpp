// SPDX-License-Identifier: Apache-2.0
// The informer's driver coroutine against a fake API server: what it asks for (resourceVersion,
// limit, continue), how long it waits between failures, and when it reports itself current.

#include "ctrl/cache/informer.h"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "ctrl/base/clock.h"
#include "informer_test_support.h"
#include "support/async_test.h"
#include "support/async_wait.h"
#include "support/fake_api_server.h"

namespace asio = boost::asio;
using asio::awaitable;
using kube::testing::FakeApiServer;
using kube::testing::run_async;
using namespace std::chrono_literals;
using Reply = FakeApiServer::Reply;
using Request = FakeApiServer::Request;

namespace {

using ctrl::testing::gone_watch;
using ctrl::testing::has;
using ctrl::testing::is_watch;
using ctrl::testing::quiet_watch;

std::string status(int code, const std::string& reason) {
  return R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":")" + reason +
         R"(","message":"test","code":)" + std::to_string(code) + "}";
}

std::string list(const std::string& rv, const std::string& continue_token,
                 const std::string& names) {
  std::string items;
  for (char n : names) {
    if (!items.empty()) items += ",";
    items += R"({"metadata":{"namespace":"ns","name":")" + std::string(1, n) +
             R"(","resourceVersion":"1","uid":"u)" + std::string(1, n) + "\"}}";
  }
  return R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
         R"(","continue":")" + continue_token + R"("},"items":[)" + items + "]}";
}

struct Fixture {
  using Handler = std::function<Reply(const Request&)>;

  asio::io_context io;
  Handler handler;
  std::vector<std::chrono::steady_clock::time_point> times;  // when each request arrived
  FakeApiServer server{io, [this](const Request& r) {
                         times.push_back(std::chrono::steady_clock::now());
                         return handler(r);
                       }};
  ctrl::FakeClock clock;
  ctrl::FakeRandom random{0.0};  // no jitter: exact backoff delays

  std::unique_ptr<ctrl::Informer> informer(std::int64_t page_size = 500,
                                           std::chrono::milliseconds initial_backoff = 40ms,
                                           std::chrono::milliseconds max_backoff = 320ms,
                                           bool stream_lists = false) {
    kube::RestConfig c;
    c.scheme = "http";
    c.host = "127.0.0.1";
    c.port = std::to_string(server.port());
    auto client = std::make_shared<kube::RestClient>(std::make_shared<kube::HttpTransport>(
        io.get_executor(), c, kube::HttpTransport::Options{}, nullptr, nullptr));
    ctrl::Informer::Options o;
    o.collection = kube::ResourcePath::from_api_version("v1", "configmaps").in_namespace("ns");
    o.page_size = page_size;
    o.backoff.initial = initial_backoff;
    o.backoff.max = max_backoff;
    o.backoff.jitter = 0;
    o.stream_lists = stream_lists;
    return std::make_unique<ctrl::Informer>(io.get_executor(), client, o, clock, random);
  }

  // Runs `body` with a deadline; stops the informer and the server however it ends.
  void run(ctrl::Informer& informer, awaitable<void> body) {
    run_async(io, std::move(body), [&] {
      informer.stop();
      server.stop();
    });
  }

  std::chrono::milliseconds gap(std::size_t i) const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(times.at(i) - times.at(i - 1));
  }
};

awaitable<bool> wait_for(std::function<bool()> done) {
  return ctrl::testing::wait_for(std::move(done), 5s);
}

}  // namespace

TEST_CASE("informer driver: a list that keeps failing backs off, doubling to the cap",
          "[informer]") {
  Fixture f;
  f.handler = [](const Request&) { return Reply::json(503, status(503, "ServiceUnavailable")); };
  auto informer = f.informer();
  f.run(*informer, [&]() -> awaitable<void> {
    asio::co_spawn(f.io, informer->run(), asio::detached);
    REQUIRE(co_await wait_for([&] { return f.server.requests() >= 7; }));
    informer->stop();
    CHECK_FALSE(informer->has_synced());
    CHECK_FALSE(informer->is_current());
    // 40, 80, 160, 320, then capped at 320 ms: below the next doubling, which leaves slack for
    // a loaded machine.
    const std::chrono::milliseconds want[] = {40ms, 80ms, 160ms, 320ms, 320ms, 320ms};
    for (std::size_t i = 1; i <= 6; ++i) {
      INFO("gap before request " << i << ": " << f.gap(i).count() << " ms");
      CHECK(f.gap(i) >= want[i - 1]);
    }
    CHECK(f.gap(5) < 640ms);
    CHECK(f.gap(6) < 640ms);
    // Every retry is a fresh list from the watch cache: it never synced.
    for (const auto& r : f.server.seen()) CHECK(has(r, "resourceVersion=0"));
  }());
}

TEST_CASE("informer driver: the backoff starts over after two healthy minutes", "[informer]") {
  Fixture f;
  int lists = 0;
  f.handler = [&](const Request& r) {
    if (is_watch(r)) return Reply::json(500, status(500, "InternalError"));
    if (++lists <= 5) return Reply::json(503, status(503, "ServiceUnavailable"));
    // Five failed lists (40 + 80 + 160 + 320 + 640 ms): the next delay would be 1280 ms. But this
    // list succeeds two minutes (on the fake clock) after the last failure.
    f.clock.step(2min + 1s);
    return Reply::json(200, list("5", "", "a"));
  };
  auto informer = f.informer(500, 40ms, 5s);
  f.run(*informer, [&]() -> awaitable<void> {
    asio::co_spawn(f.io, informer->run(), asio::detached);
    REQUIRE(co_await wait_for([&] { return f.server.requests() >= 8; }));
    CHECK(informer->has_synced());
    // seen: 5 failed lists, the good list, a failed watch, the next watch 40 ms later.
    INFO("gaps " << f.gap(5).count() << " " << f.gap(7).count() << " ms");
    CHECK(f.gap(5) >= 640ms);
    CHECK(f.gap(7) >= 40ms);
    CHECK(f.gap(7) < 1280ms);  // the delay had it not started over: slack for a loaded machine
    informer->stop();
  }());
}

TEST_CASE("informer driver: a 410 on the watch relists after the backoff, as a quorum read",
          "[informer]") {
  Fixture f;
  int lists = 0;
  bool hold_relist = true;
  f.handler = [&](const Request& r) {
    if (is_watch(r)) return lists == 1 ? gone_watch() : quiet_watch();
    ++lists;
    if (lists == 2 && hold_relist) return Reply::json(503, status(503, "ServiceUnavailable"));
    return Reply::json(200, list(lists == 1 ? "5" : "9", "", "ab"));
  };
  auto informer = f.informer();
  f.run(*informer, [&]() -> awaitable<void> {
    asio::co_spawn(f.io, informer->run(), asio::detached);
    // The first list is synced, then the watch says 410: no longer current until a relist.
    REQUIRE(co_await wait_for([&] { return informer->lists_completed() == 1; }));
    REQUIRE(co_await wait_for([&] { return !informer->is_current(); }));
    CHECK(informer->has_synced());
    CHECK(informer->store().size() == 2);  // still readable
    REQUIRE(co_await wait_for([&] { return informer->lists_completed() == 2; }));
    CHECK(informer->is_current());

    // The re-watch is opened right after the list is in; wait until it reached the server.
    REQUIRE(co_await wait_for([&] { return f.server.requests() >= 5; }));
    const auto& seen = f.server.seen();
    CHECK(has(seen[0], "resourceVersion=0"));  // the first list: from the watch cache
    CHECK(has(seen[0], "limit=500"));
    CHECK(is_watch(seen[1]));
    CHECK(has(seen[1], "resourceVersion=5"));
    // After the 410: waited for the backoff, then a quorum read (no resourceVersion).
    CHECK_FALSE(has(seen[2], "resourceVersion"));
    CHECK(f.gap(2) >= 40ms);
    // The failed relist backed off once more before the next try.
    CHECK_FALSE(has(seen[3], "resourceVersion"));
    CHECK(f.gap(3) >= 80ms);
    CHECK(is_watch(seen[4]));
    CHECK(has(seen[4], "resourceVersion=9"));
    informer->stop();
  }());
}

TEST_CASE("informer driver: an expired continue token falls back to one full list", "[informer]") {
  Fixture f;
  f.handler = [&](const Request& r) {
    if (is_watch(r)) return quiet_watch();
    if (has(r, "continue=")) return Reply::json(410, status(410, "Expired"));
    if (has(r, "limit=")) return Reply::json(200, list("5", "tok", "a"));
    return Reply::json(200, list("7", "", "abc"));  // unpaginated: everything
  };
  auto informer = f.informer(1, 1s, 1s);
  f.run(*informer, [&]() -> awaitable<void> {
    asio::co_spawn(f.io, informer->run(), asio::detached);
    REQUIRE(co_await wait_for([&] { return informer->is_current(); }));
    CHECK(informer->store().size() == 3);
    const auto& seen = f.server.seen();
    REQUIRE(seen.size() >= 3);
    CHECK(has(seen[0], "limit=1"));
    CHECK(has(seen[1], "continue=tok"));
    CHECK_FALSE(has(seen[1], "resourceVersion"));  // pinned by the token, not sent
    CHECK_FALSE(has(seen[2], "limit="));           // one request for everything
    CHECK_FALSE(has(seen[2], "continue="));
    CHECK(has(seen[2], "resourceVersion=0"));
    CHECK(f.gap(2) < 1s);  // right away, not after the 1 s backoff
    REQUIRE(co_await wait_for([&] { return f.server.requests() >= 4; }));
    CHECK(is_watch(seen[3]));
    CHECK(has(seen[3], "resourceVersion=7"));
    informer->stop();
  }());
}

namespace {

std::string added(char name, int rv) {
  return R"({"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":)"
         R"({"namespace":"ns","name":")" +
         std::string(1, name) + R"(","resourceVersion":")" + std::to_string(rv) + R"(","uid":"u)" +
         std::string(1, name) + "\"}}}\n";
}

std::string initial_events_end(int rv) {
  return R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":)"
         R"({"resourceVersion":")" +
         std::to_string(rv) +
         R"(","annotations":{"k8s.io/initial-events-end":"true"}}}})"
         "\n";
}

}  // namespace

TEST_CASE("informer driver: a streaming list fills the cache from one watch, which goes on",
          "[informer]") {
  Fixture f;
  f.handler = [&](const Request& r) {
    if (is_watch(r) && has(r, "sendInitialEvents=true")) {
      return Reply::stream_of({added('a', 5), added('b', 7), initial_events_end(9), added('c', 10)},
                              true);
    }
    return Reply::json(500, status(500, "InternalError"));
  };
  auto informer = f.informer(500, 40ms, 320ms, true);
  std::vector<std::string> seen_adds;
  informer->add_handler([&](const ctrl::StoreChange& c) {
    seen_adds.push_back(std::string(c.new_object->operator[]("metadata")["name"].GetString()) +
                        (c.in_initial_list ? "/initial" : "/live"));
  });
  f.run(*informer, [&]() -> awaitable<void> {
    asio::co_spawn(f.io, informer->run(), asio::detached);
    REQUIRE(co_await wait_for([&] { return informer->store().size() == 3; }));
    CHECK(informer->is_current());
    CHECK(informer->lists_completed() == 1);
    // One request: no list, and the watch after the list is the same stream.
    REQUIRE(f.server.requests() == 1);
    const auto& r = f.server.seen()[0];
    CHECK(is_watch(r));
    CHECK(has(r, "resourceVersionMatch=NotOlderThan"));
    CHECK(has(r, "allowWatchBookmarks=true"));
    CHECK_FALSE(has(r, "resourceVersion="));  // a consistent snapshot
    // The initial events reach handlers as the first list's adds (queued at low priority), in
    // the staging store's order; the live event after them.
    REQUIRE(seen_adds.size() == 3);
    std::sort(seen_adds.begin(), seen_adds.begin() + 2);
    CHECK(seen_adds == std::vector<std::string>{"a/initial", "b/initial", "c/live"});
    informer->stop();
  }());
}

TEST_CASE("informer driver: an API server that refuses streaming lists is listed instead",
          "[informer]") {
  Fixture f;
  f.handler = [&](const Request& r) {
    if (is_watch(r) && has(r, "sendInitialEvents=true")) {
      // kube-apiserver --feature-gates=WatchList=false
      return Reply::json(
          422, R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
               R"("reason":"Invalid","code":422,"message":"ListOptions.meta.k8s.io )"
               R"(\"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents )"
               R"(is forbidden for watch unless the WatchList feature gate is enabled"})");
    }
    if (is_watch(r)) return quiet_watch();
    return Reply::json(200, list("5", "", "ab"));
  };
  auto informer = f.informer(500, 1s, 1s, true);
  f.run(*informer, [&]() -> awaitable<void> {
    asio::co_spawn(f.io, informer->run(), asio::detached);
    REQUIRE(co_await wait_for([&] { return informer->is_current(); }));
    CHECK(informer->store().size() == 2);
    REQUIRE(co_await wait_for([&] { return f.server.requests() >= 3; }));
    const auto& seen = f.server.seen();
    CHECK(has(seen[0], "sendInitialEvents=true"));
    CHECK_FALSE(is_watch(seen[1]));  // the list, at once (not after the 1 s backoff)
    CHECK(has(seen[1], "limit=500"));
    CHECK(f.gap(1) < 1s);  // not after the 1 s backoff
    CHECK(is_watch(seen[2]));
    CHECK_FALSE(has(seen[2], "sendInitialEvents"));
    CHECK(has(seen[2], "resourceVersion=5"));
    informer->stop();
  }());
}
