// SPDX-License-Identifier: Apache-2.0
#include "ctrl/leader/leader_elector.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <regex>

#include "ctrl/base/clock.h"
#include "ctrl/leader/leader_election_record.h"
#include "ctrl/metrics/metrics_registry.h"
#include "fake_lease_store.h"
#include "support/async_test.h"
#include "support/async_wait.h"
#include "support/fake_api_server.h"

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::awaitable;
using ctrl::LeaderElector;
using kube::testing::FakeApiServer;
using kube::testing::run_async;
using namespace std::chrono_literals;
using Reply = FakeApiServer::Reply;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
using ctrl::testing::FakeLeaseStore;
using ctrl::testing::status;
using ctrl::testing::to_json;

ctrl::LeaderElectionConfig fast_config() {
  ctrl::LeaderElectionConfig c;
  c.lease_duration = 2s;
  c.renew_deadline = 1000ms;
  c.retry_period = 100ms;
  c.jitter_factor = 0.5;
  return c;
}

struct Fixture {
  asio::io_context io;
  FakeLeaseStore store;
  FakeApiServer server{io, [this](const FakeApiServer::Request& r) { return store.handle(r); }};
  ctrl::RealClock clock;
  ctrl::SeededRandom random{42};

  std::shared_ptr<kube::RestClient> client() {
    kube::RestConfig c;
    c.scheme = "http";
    c.host = "127.0.0.1";
    c.port = std::to_string(server.port());
    return std::make_shared<kube::RestClient>(std::make_shared<kube::HttpTransport>(
        io.get_executor(), c, kube::HttpTransport::Options{}, nullptr, nullptr));
  }

  std::unique_ptr<LeaderElector> elector(const std::string& identity,
                                         ctrl::MetricsRegistry* metrics = nullptr) {
    LeaderElector::Options o;
    o.lease_namespace = "ns";
    o.lease_name = "lock";
    o.identity = identity;
    o.config = fast_config();
    return std::make_unique<LeaderElector>(io.get_executor(), client(), o, clock, random, metrics);
  }
};

using ctrl::testing::wait_for;

}  // namespace

TEST_CASE("elector: one of two candidates creates the Lease and leads, release hands over",
          "[leader]") {
  Fixture f;
  ctrl::MetricsRegistry metrics_a;
  auto a = f.elector("a", &metrics_a);
  auto b = f.elector("b");
  int a_started = 0, b_started = 0, stopped = 0;
  bool a_done = false, b_done = false;
  a->on_started_leading([&] { ++a_started; });
  b->on_started_leading([&] { ++b_started; });
  a->on_stopped_leading([&] { ++stopped; });
  b->on_stopped_leading([&] { ++stopped; });
  CHECK_THAT(metrics_a.render(),
             Catch::Contains("leader_election_master_status{name=\"lock\"} 0\n"));
  run_async(
      f.io,
      [&]() -> awaitable<void> {
        asio::co_spawn(f.io, a->run(), [&](std::exception_ptr) { a_done = true; });
        REQUIRE(co_await wait_for([&] { return a->is_leader(); }, 2s));
        asio::co_spawn(f.io, b->run(), [&](std::exception_ptr) { b_done = true; });
        CHECK(a_started == 1);
        CHECK(f.store.record().holder_identity == "a");
        CHECK(f.store.record().lease_transitions == 0);
        CHECK_THAT(metrics_a.render(),
                   Catch::Contains("leader_election_master_status{name=\"lock\"} 1\n"));

        // a keeps renewing; b keeps waiting (the record changes, so it never expires for b).
        const int writes = f.store.writes;
        const auto renew_time = f.store.record().renew_time;
        co_await wait_for([] { return false; }, 500ms);
        CHECK(a->is_leader());
        CHECK_FALSE(b->is_leader());
        CHECK(f.store.writes >= writes + 2);  // renews every 100 ms; slack for a loaded machine
        CHECK(f.store.record().renew_time > renew_time);
        CHECK(f.store.record().acquire_time < f.store.record().renew_time);

        CHECK(co_await a->release());
        CHECK_FALSE(a->is_leader());
        CHECK_THAT(metrics_a.render(),
                   Catch::Contains("leader_election_master_status{name=\"lock\"} 0\n"));
        // b sees an empty holder and takes the lease at its next try.
        REQUIRE(co_await wait_for([&] { return b->is_leader(); }, 1s));
        CHECK(b_started == 1);
        const auto rec = f.store.record();
        CHECK(rec.holder_identity == "b");
        CHECK(rec.lease_transitions == 1);
        CHECK(rec.lease_duration == 2s);
        REQUIRE(co_await wait_for([&] { return a_done; }, 1s));
        CHECK(stopped == 0);  // neither release nor stop is a loss

        b->stop();
        REQUIRE(co_await wait_for([&] { return b_done; }, 1s));
        CHECK_FALSE(b->is_leader());
        CHECK(f.store.record().holder_identity == "b");  // stop() does not release
      }(),
      [&] {
        a->stop();
        b->stop();
        f.server.stop();
      });
}

TEST_CASE("elector: a leader whose renews hang loses at the renew deadline", "[leader]") {
  Fixture f;
  auto a = f.elector("a");
  int stopped = 0;
  bool done = false;
  std::chrono::steady_clock::time_point lost_at;
  a->on_stopped_leading([&] {
    ++stopped;
    lost_at = std::chrono::steady_clock::now();
  });
  run_async(
      f.io,
      [&]() -> awaitable<void> {
        asio::co_spawn(f.io, a->run(), [&](std::exception_ptr) { done = true; });
        REQUIRE(co_await wait_for([&] { return a->is_leader(); }, 2s));
        const int writes_before = f.store.writes;
        // The API server stops answering; the transport's own timeout (60 s) is far longer.
        f.store.hang = true;
        const auto hung_at = std::chrono::steady_clock::now();
        REQUIRE(co_await wait_for([&] { return stopped == 1; }, 3s));
        const auto took = lost_at - hung_at;
        // The deadline counts from the last successful renew, at most one retry before the hang.
        CHECK(took <= fast_config().renew_deadline + 500ms);
        CHECK(took >= fast_config().renew_deadline - 2 * fast_config().retry_period - 100ms);
        CHECK_FALSE(a->is_leader());
        CHECK(f.store.writes == writes_before);
      }(),
      [&] {
        a->stop();
        f.server.stop();
      });
}

TEST_CASE("elector: a standby keeps retrying through API errors", "[leader]") {
  Fixture f;
  int failures_left = 5;
  FakeApiServer flaky(f.io, [&](const FakeApiServer::Request& r) {
    if (failures_left > 0) {
      --failures_left;
      return Reply::json(500, status(500, "InternalError"));
    }
    return f.store.handle(r);
  });
  LeaderElector::Options o;
  o.lease_namespace = "ns";
  o.lease_name = "lock";
  o.config = fast_config();
  kube::RestConfig c;
  c.scheme = "http";
  c.host = "127.0.0.1";
  c.port = std::to_string(flaky.port());
  auto client = std::make_shared<kube::RestClient>(std::make_shared<kube::HttpTransport>(
      f.io.get_executor(), c, kube::HttpTransport::Options{}, nullptr, nullptr));
  LeaderElector a(f.io.get_executor(), client, o, f.clock, f.random, nullptr);
  run_async(
      f.io,
      [&]() -> awaitable<void> {
        asio::co_spawn(f.io, a.run(), [](std::exception_ptr) {});
        REQUIRE(co_await wait_for([&] { return a.is_leader(); }, 3s));
        CHECK(failures_left == 0);
        CHECK(f.store.record().holder_identity == a.identity());
      }(),
      [&] {
        a.stop();
        flaky.stop();
        f.server.stop();
      });
}

TEST_CASE("elector: the default identity is the hostname and a random UUID", "[leader]") {
  ctrl::SeededRandom random(1);
  const auto one = LeaderElector::default_identity(random);
  const auto two = LeaderElector::default_identity(random);
  CHECK(one != two);
  CHECK(std::regex_match(
      one,
      std::regex("[^_]+_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")));
}
