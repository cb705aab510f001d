// SPDX-License-Identifier: Apache-2.0
// The manager's lifecycle against a fake API server: a background coroutine that dies ends the
// run with exit code 1 and says which one; /readyz follows every informer's currency; SIGTERM's
// shutdown drains the workers, flushes Events, and only then releases the Lease.

#include "ctrl/manager.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cache/informer_test_support.h"
#include "ctrl/base/clock.h"
#include "ctrl/events/event_recorder.h"
#include "ctrl/metrics/metrics_registry.h"
#include "ctrl/reconciler.h"
#include "kube/http/http_transport.h"
#include "leader/fake_lease_store.h"
#include "support/async_wait.h"
#include "support/fake_api_server.h"

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::awaitable;
using ctrl::Manager;
using kube::testing::FakeApiServer;
using namespace std::chrono_literals;
using Reply = FakeApiServer::Reply;
using Request = FakeApiServer::Request;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
using ctrl::testing::gone_watch;
using ctrl::testing::has;
using ctrl::testing::is_watch;
using ctrl::testing::quiet_watch;
using ctrl::testing::sleep_for;

awaitable<bool> wait_for(std::function<bool()> done) {
  return ctrl::testing::wait_for(std::move(done), 5s);
}

std::string configmap_list(const std::string& rv) {
  return R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
         R"("},"items":[{"metadata":{"namespace":"ns","name":"a","resourceVersion":"1",)"
         R"("uid":"ua"}}]})";
}

struct Fixture {
  asio::io_context io;
  std::function<Reply(const Request&)> handler = [](const Request& r) {
    if (is_watch(r)) return quiet_watch();
    return Reply::json(200, configmap_list("5"));
  };
  std::vector<Request> log;
  FakeApiServer server{io, [this](const Request& r) {
                         log.push_back(r);
                         return handler(r);
                       }};
  ctrl::RealClock clock;
  ctrl::SeededRandom random{7};
  ctrl::MetricsRegistry metrics;
  std::shared_ptr<kube::RestClient> client = make_client(server.port());

  std::shared_ptr<kube::RestClient> make_client(unsigned short port) {
    kube::RestConfig c;
    c.scheme = "http";
    c.host = "127.0.0.1";
    c.port = std::to_string(port);
    return std::make_shared<kube::RestClient>(std::make_shared<kube::HttpTransport>(
        io.get_executor(), c, kube::HttpTransport::Options{}, nullptr, nullptr));
  }

  static Manager::Options options() {
    Manager::Options o;
    o.metrics_bind_address = "0";
    o.health_probe_bind_address = "0";
    o.cache_sync_timeout = 10s;
    return o;
  }

  ctrl::Informer::Options configmaps() {
    ctrl::Informer::Options o;
    o.collection = kube::ResourcePath::from_api_version("v1", "configmaps").in_namespace("ns");
    o.backoff.initial = 50ms;
    o.backoff.jitter = 0;
    return o;
  }

  // Runs the manager with a deadline (a broken manager must fail the test, not hang it), then
  // lets the coroutines it stopped unwind while everything they use still exists.
  int run(Manager& manager) {
    asio::steady_timer guard(io, 20s);
    guard.async_wait([&](boost::system::error_code ec) {
      if (ec) return;
      FAIL_CHECK("the manager did not stop within 20 s");
      manager.request_shutdown();
    });
    const int code = manager.run();
    guard.cancel();
    server.stop();
    io.restart();
    io.run_for(500ms);
    return code;
  }
};

// Reconciles each key slowly and records an Event about it.
class SlowRecordingReconciler final : public ctrl::Reconciler {
 public:
  explicit SlowRecordingReconciler(ctrl::EventRecorder& events) : events_(events) {}
  int started = 0;
  int finished = 0;

  awaitable<ctrl::ReconcileResult> reconcile(ctrl::Request request,
                                             const ctrl::ReconcileContext&) override {
    ++started;
    co_await sleep_for(300ms);
    events_.record(ctrl::ObjectReference("v1", "ConfigMap", request.ns, request.name, "ua"),
                   ctrl::EventType::normal, "Done", "reconciled");
    ++finished;
    co_return ctrl::ReconcileResult::done();
  }

 private:
  ctrl::EventRecorder& events_;
};

}  // namespace

TEST_CASE("manager: an informer that throws ends the run with exit 1, naming it", "[manager]") {
  Fixture f;
  Manager manager(f.io, Fixture::options(), f.client, f.metrics, f.clock, f.random);
  auto& informer = manager.add_informer(f.configmaps());
  informer.add_handler([](const ctrl::StoreChange&) { throw std::runtime_error("handler bug"); });
  CHECK(f.run(manager) == Manager::kExitFailure);
  CHECK_FALSE(manager.aborted());  // the graceful path
  CHECK(manager.failure() == "informer \"v1 configmaps\" failed: handler bug");
}

TEST_CASE("manager: a background task that throws or ends on its own ends the run with exit 1",
          "[manager]") {
  SECTION("throws") {
    Fixture f;
    Manager manager(f.io, Fixture::options(), f.client, f.metrics, f.clock, f.random);
    manager.add_background_task(
        "sender",
        []() -> awaitable<void> {
          co_await sleep_for(10ms);
          throw std::runtime_error("boom");
        },
        [] {});
    CHECK(f.run(manager) == Manager::kExitFailure);
    CHECK(manager.failure() == "background task \"sender\" failed: boom");
  }
  SECTION("ends") {
    Fixture f;
    Manager manager(f.io, Fixture::options(), f.client, f.metrics, f.clock, f.random);
    manager.add_background_task(
        "server", []() -> awaitable<void> { co_return; }, [] {});
    CHECK(f.run(manager) == Manager::kExitFailure);
    CHECK(manager.failure() == "background task \"server\" ended unexpectedly");
  }
  SECTION("ends when asked at shutdown: exit 0") {
    Fixture f;
    Manager manager(f.io, Fixture::options(), f.client, f.metrics, f.clock, f.random);
    asio::steady_timer stop(f.io, asio::steady_timer::time_point::max());
    manager.add_background_task(
        "server", [&]() -> awaitable<void> { co_await stop.async_wait(kAwait); },
        [&] { stop.cancel(); });
    asio::co_spawn(
        f.io,
        [&]() -> awaitable<void> {
          co_await sleep_for(100ms);
          manager.request_shutdown();
        },
        asio::detached);
    CHECK(f.run(manager) == Manager::kExitOk);
    CHECK(manager.failure().empty());
  }
}

TEST_CASE("manager: a cache that never syncs exits 1 at the cache sync timeout", "[manager]") {
  Fixture f;
  f.handler = [](const Request&) {
    return Reply::json(403, ctrl::testing::status(403, "Forbidden"));
  };
  auto o = Fixture::options();
  o.cache_sync_timeout = 500ms;
  Manager manager(f.io, o, f.client, f.metrics, f.clock, f.random);
  manager.add_informer(f.configmaps());
  const auto start = std::chrono::steady_clock::now();
  CHECK(f.run(manager) == Manager::kExitFailure);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK(manager.failure() == "cache of v1 configmaps not synced");
  CHECK(f.server.requests() >= 2);  // it kept trying, with backoff, until the timeout
}

TEST_CASE("manager: /readyz is false while an informer relists after a 410", "[manager]") {
  Fixture f;
  int lists = 0;
  bool serve_relist = false;
  f.handler = [&](const Request& r) {
    if (is_watch(r)) return lists == 1 ? gone_watch() : quiet_watch();
    if (++lists >= 2 && !serve_relist) {
      return Reply::json(503, ctrl::testing::status(503, "ServiceUnavailable"));
    }
    return Reply::json(200, configmap_list(std::to_string(lists)));
  };
  auto o = Fixture::options();
  o.health_probe_bind_address = "127.0.0.1:0";
  Manager manager(f.io, o, f.client, f.metrics, f.clock, f.random);
  auto& informer = manager.add_informer(f.configmaps());
  std::vector<int> readyz;  // HTTP status of each probe
  auto probe = [&]() -> awaitable<int> {
    kube::RestConfig c;
    c.scheme = "http";
    c.host = "127.0.0.1";
    c.port = std::to_string(manager.health_port());
    kube::HttpTransport transport(f.io.get_executor(), c, kube::HttpTransport::Options{}, nullptr,
                                  nullptr);
    kube::HttpRequest req;
    req.target = "/readyz";
    auto res = co_await transport.send(req);
    co_return res ? res->status : 0;
  };
  asio::co_spawn(
      f.io,
      [&]() -> awaitable<void> {
        // Synced once, then the watch said 410: the relist fails for a while.
        REQUIRE(co_await wait_for([&] { return lists >= 3; }));
        CHECK(informer.has_synced());
        CHECK_FALSE(manager.caches_current());
        readyz.push_back(co_await probe());
        serve_relist = true;
        REQUIRE(co_await wait_for([&] { return manager.caches_current(); }));
        readyz.push_back(co_await probe());
        manager.request_shutdown();
      },
      [&](std::exception_ptr e) {
        if (e) manager.request_shutdown();
        CHECK_FALSE(e);
      });
  CHECK(f.run(manager) == Manager::kExitOk);
  CHECK(readyz == std::vector<int>{503, 200});
}

TEST_CASE("manager: SIGTERM drains the workers, flushes Events, then releases the Lease",
          "[manager]") {
  Fixture f;
  ctrl::testing::FakeLeaseStore lease;
  int event_posts = 0;
  f.handler = [&](const Request& r) {
    if (has(r, "/leases")) return lease.handle(r);
    if (has(r, "/events")) {
      // The first write fails: without the flush, the Lease would be released (and the process
      // gone) before the retry, one retry_delay later.
      if (++event_posts == 1) {
        return Reply::json(503, ctrl::testing::status(503, "ServiceUnavailable"));
      }
      return Reply::json(201, r.body);
    }
    if (is_watch(r)) return quiet_watch();
    return Reply::json(200, configmap_list("5"));
  };
  auto o = Fixture::options();
  o.leader_elect = true;
  o.leader_election_namespace = "ns";
  o.leader_election_id = "lock";
  o.leader_election.lease_duration = 2s;
  o.leader_election.renew_deadline = 1000ms;
  o.leader_election.retry_period = 100ms;
  Manager manager(f.io, o, f.client, f.metrics, f.clock, f.random);
  auto& informer = manager.add_informer(f.configmaps());
  ctrl::EventRecorder::Options eo;
  eo.component = "test";
  eo.instance = "test-host";
  eo.retry_delay = 300ms;
  ctrl::EventRecorder events(f.io.get_executor(), f.client, eo, f.clock, nullptr);
  manager.add_event_recorder(events);
  SlowRecordingReconciler reconciler(events);
  ctrl::Controller::Options co;
  co.name = "test";
  auto& controller = manager.add_controller(co, reconciler);
  informer.add_handler(controller.enqueue_self());

  asio::co_spawn(
      f.io,
      [&]() -> awaitable<void> {
        // Leading, and one reconcile in flight: SIGTERM now.
        REQUIRE(co_await wait_for([&] { return reconciler.started == 1; }));
        CHECK(lease.record().holder_identity != "");
        manager.request_shutdown();
      },
      [&](std::exception_ptr e) {
        if (e) manager.request_shutdown();
        CHECK_FALSE(e);
      });
  CHECK(f.run(manager) == Manager::kExitOk);
  CHECK(reconciler.finished == 1);  // drained, not cut off
  CHECK(event_posts == 2);          // the retry went out before the exit
  CHECK(lease.record().holder_identity.empty());
  // The order at the server: the Event's last write, then the release (the last Lease write).
  std::size_t last_event = 0, last_lease_write = 0;
  for (std::size_t i = 0; i < f.log.size(); ++i) {
    if (has(f.log[i], "/events")) last_event = i;
    if (has(f.log[i], "/leases") && f.log[i].method == http::verb::put) last_lease_write = i;
  }
  CHECK(last_event < last_lease_write);
}
