// SPDX-License-Identifier: Apache-2.0
// The informer's driver against a fake API server: what it does when a watch goes silent.

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "ctrl/base/clock.h"
#include "ctrl/cache/informer.h"
#include "support/async_test.h"
#include "support/fake_api_server.h"

namespace asio = boost::asio;
using asio::awaitable;
using kube::testing::FakeApiServer;
using kube::testing::run_async;
using namespace std::chrono_literals;

TEST_CASE("a watch silent past its idle deadline is re-opened at once from its resourceVersion",
          "[informer]") {
  // A stalled network: the watch delivers one event, then nothing (no bookmark either). The
  // informer must notice at the idle deadline and watch again from the event's resourceVersion
  // right away: no backoff (0.8 s at least here) and no relist.
  asio::io_context io;
  std::vector<std::string> watches;
  std::vector<std::chrono::steady_clock::time_point> watched_at;
  int lists = 0;
  FakeApiServer server(io, [&](const FakeApiServer::Request& r) {
    if (r.target.find("watch=1") == std::string::npos) {
      ++lists;
      return FakeApiServer::Reply::json(
          200, R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"10"},)"
               R"("items":[{"metadata":{"namespace":"ns","name":"a","resourceVersion":"9"}}]})");
    }
    watches.push_back(r.target);
    watched_at.push_back(std::chrono::steady_clock::now());
    return FakeApiServer::Reply::stream_of(
        {R"({"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":)"
         R"({"namespace":"ns","name":"a","resourceVersion":"11"}}})"
         "\n"},
        /*stall=*/true);
  });
  kube::RestConfig config;
  config.scheme = "http";
  config.host = "127.0.0.1";
  config.port = std::to_string(server.port());
  auto client = std::make_shared<kube::RestClient>(std::make_shared<kube::HttpTransport>(
      io.get_executor(), config, kube::HttpTransport::Options{}, nullptr, nullptr));
  ctrl::RealClock clock;
  ctrl::FakeRandom random(0.0);  // backoff without jitter: exactly 800 ms
  ctrl::Informer::Options options;
  options.collection = kube::ResourcePath::from_api_version("v1", "configmaps");
  options.watch_idle_timeout = 300ms;
  ctrl::Informer informer(io.get_executor(), client, options, clock, random);

  run_async(
      io,
      [&]() -> awaitable<void> {
        asio::co_spawn(io, informer.run(), asio::detached);
        asio::steady_timer poll(io);
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (watches.size() < 2 && std::chrono::steady_clock::now() < deadline) {
          poll.expires_after(10ms);
          co_await poll.async_wait(asio::use_awaitable);
        }
        informer.stop();
      }(),
      [&] { server.stop(); });

  REQUIRE(watches.size() >= 2);
  CHECK(watches[0].find("resourceVersion=10&") != std::string::npos);
  CHECK(watches[1].find("resourceVersion=11&") != std::string::npos);
  const auto gap = watched_at[1] - watched_at[0];
  CHECK(gap >= 300ms);
  CHECK(gap < 300ms + 800ms);  // a backoff would have added 800 ms to the idle deadline
  CHECK(lists == 1);
  CHECK(informer.lists_completed() == 1);
  CHECK(informer.store().size() == 1);
}
