// SPDX-License-Identifier: Apache-2.0
#include "ctrl/controller.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>

using namespace ctrl;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

// Scripted reconciler: per key, a list of outcomes to return in turn (then done). Each reconcile
// awaits a short timer so concurrent workers really overlap.
class ScriptedReconciler : public Reconciler {
 public:
  explicit ScriptedReconciler(asio::io_context& io)
      : gate(io, asio::steady_timer::time_point::max()), io_(io) {}

  std::map<std::string, std::vector<std::function<ReconcileResult()>>> script;
  std::map<std::string, int> calls;
  std::vector<std::string> order;  // keys in the order their reconciles started
  std::map<std::string, int> in_flight;
  int max_in_flight_same_key = 0;
  std::vector<std::string> ids;
  std::vector<std::optional<std::chrono::steady_clock::time_point>> deadlines;
  // Reconciles of a held key wait until gate.cancel(), so a test can act while one is in flight.
  std::set<std::string> held;
  asio::steady_timer gate;

  asio::awaitable<ReconcileResult> reconcile(Request request,
                                             const ReconcileContext& context) override {
    auto key = request.key();
    ids.push_back(context.reconcile_id);
    deadlines.push_back(context.deadline);
    order.push_back(key);
    CHECK(context.log_prefix.find("namespace=" + request.ns + " name=" + request.name) !=
          std::string::npos);
    max_in_flight_same_key = std::max(max_in_flight_same_key, ++in_flight[key]);
    if (held.count(key)) {
      co_await gate.async_wait(asio::as_tuple(asio::use_awaitable));
    } else {
      asio::steady_timer t(io_, 2ms);
      co_await t.async_wait(asio::use_awaitable);
    }
    --in_flight[key];
    int n = calls[key]++;
    auto& steps = script[key];
    if (n < static_cast<int>(steps.size())) co_return steps[n]();
    co_return ReconcileResult::done();
  }

 private:
  asio::io_context& io_;
};

// Runs the loop until `done()` or the deadline; returns whether `done()` became true.
bool run_until(asio::io_context& io, const std::function<bool()>& done,
               std::chrono::milliseconds deadline = 5s) {
  auto end = std::chrono::steady_clock::now() + deadline;
  while (!done() && std::chrono::steady_clock::now() < end) io.run_for(5ms);
  return done();
}

struct Fixture {
  asio::io_context io;
  RealClock clock;
  SeededRandom random{42};
  MetricsRegistry metrics;
  ScriptedReconciler reconciler{io};
  ObjectStore store;  // the resync store, holding ns/NAME for each of `listed`
  std::unique_ptr<Controller> controller;
  bool finished = false;

  explicit Fixture(int workers = 3, std::chrono::milliseconds resync_period = 0ms,
                   std::vector<std::string> listed = {},
                   std::chrono::milliseconds reconcile_timeout = 0ms,
                   WriteTracker* write_tracker = nullptr,
                   std::chrono::milliseconds stale_cache_retry = 100ms) {
    informer::Replace list;
    for (const auto& name : listed) {
      auto doc = std::make_shared<rapidjson::Document>();
      doc->Parse(R"({"metadata":{"namespace":"ns","name":")" + name +
                 R"(","resourceVersion":"1"}})");
      list.items.push_back(doc);
    }
    store.apply(std::move(list));
    Controller::Options options;
    options.name = "test";
    options.max_concurrent_reconciles = workers;
    options.resync_period = resync_period;
    options.resync_store = &store;
    options.reconcile_timeout = reconcile_timeout;
    options.write_tracker = write_tracker;
    options.stale_cache_retry = stale_cache_retry;
    controller = std::make_unique<Controller>(io.get_executor(), options, reconciler, metrics,
                                              clock, random);
    asio::co_spawn(io, controller->run(), [this](std::exception_ptr) { finished = true; });
  }
  ~Fixture() {
    controller->shut_down();
    run_until(io, [&] { return finished; });
  }
};

}  // namespace

TEST_CASE("controller: reconciles each added key once", "[controller]") {
  Fixture f;
  for (auto key : {"ns/a", "ns/b", "ns/a", "ns/c"}) f.controller->queue().add(key);
  REQUIRE(run_until(f.io, [&] {
    return f.reconciler.calls["ns/a"] == 1 && f.reconciler.calls["ns/b"] == 1 &&
           f.reconciler.calls["ns/c"] == 1 && f.controller->queue().processing() == 0;
  }));
  CHECK(f.reconciler.ids.size() == 3);
  CHECK(f.reconciler.ids[0] != f.reconciler.ids[1]);
  CHECK(f.reconciler.ids[0].size() == 36);
  CHECK(f.metrics.render().find(
            "controller_runtime_reconcile_total{controller=\"test\",result=\"success\"} 3") !=
        std::string::npos);
}

TEST_CASE("controller: a key re-added while reconciling runs again after, never at once",
          "[controller]") {
  Fixture f;
  f.reconciler.held.insert("ns/a");
  f.controller->queue().add("ns/a");
  // Add it again while the first reconcile is in flight.
  REQUIRE(run_until(f.io, [&] { return f.reconciler.in_flight["ns/a"] == 1; }));
  f.controller->queue().add("ns/a");
  f.controller->queue().add("ns/a");
  f.io.run_for(20ms);
  CHECK(f.reconciler.calls["ns/a"] == 0);  // still the first one, no second in parallel
  f.reconciler.held.clear();
  f.reconciler.gate.cancel();
  REQUIRE(run_until(f.io, [&] {
    return f.reconciler.calls["ns/a"] == 2 && f.controller->queue().processing() == 0;
  }));
  CHECK(f.reconciler.max_in_flight_same_key == 1);
}

TEST_CASE("controller: errors retry with backoff, success forgets", "[controller]") {
  Fixture f;
  f.reconciler.script["ns/a"] = {[] { return ReconcileResult::error("boom"); },
                                 [] { return ReconcileResult::error("boom again"); }};
  f.controller->queue().add("ns/a");
  REQUIRE(run_until(f.io, [&] {
    return f.reconciler.calls["ns/a"] == 3 && f.controller->queue().processing() == 0;
  }));
  CHECK(f.controller->queue().num_requeues("ns/a") == 0);
  auto text = f.metrics.render();
  CHECK(text.find("controller_runtime_reconcile_errors_total{controller=\"test\"} 2") !=
        std::string::npos);
  CHECK(text.find("controller_runtime_reconcile_total{controller=\"test\",result=\"error\"} 2") !=
        std::string::npos);
}

TEST_CASE("controller: a conflict is retried with backoff, counted, and is no error",
          "[controller]") {
  Fixture f;
  f.reconciler.script["ns/a"] = {[] { return ReconcileResult::conflict("someone wrote first"); }};
  f.controller->queue().add("ns/a");
  REQUIRE(run_until(f.io, [&] {
    return f.reconciler.calls["ns/a"] == 2 && f.controller->queue().processing() == 0;
  }));
  auto text = f.metrics.render();
  CHECK(text.find("controller_runtime_reconcile_conflicts_total{controller=\"test\"} 1") !=
        std::string::npos);
  CHECK(text.find("controller_runtime_reconcile_errors_total{controller=\"test\"} 0") !=
        std::string::npos);
  CHECK(text.find("controller_runtime_reconcile_total{controller=\"test\",result=\"requeue\"} 1") !=
        std::string::npos);
}

TEST_CASE("controller: terminal errors are not retried", "[controller]") {
  Fixture f;
  f.reconciler.script["ns/a"] = {[] { return ReconcileResult::terminal("bad spec"); }};
  f.controller->queue().add("ns/a");
  f.controller->queue().add_after("ns/marker", 60ms);
  REQUIRE(run_until(f.io, [&] { return f.reconciler.calls["ns/marker"] == 1; }));
  CHECK(f.reconciler.calls["ns/a"] == 1);
  CHECK(f.metrics.render().find(
            "controller_runtime_terminal_reconcile_errors_total{controller=\"test\"} 1") !=
        std::string::npos);
}

TEST_CASE("controller: requeue_after brings the key back later", "[controller]") {
  Fixture f;
  f.reconciler.script["ns/a"] = {[] { return ReconcileResult::requeue(30ms); }};
  auto start = std::chrono::steady_clock::now();
  f.controller->queue().add("ns/a");
  REQUIRE(run_until(f.io, [&] { return f.reconciler.calls["ns/a"] == 2; }));
  CHECK(std::chrono::steady_clock::now() - start >= 30ms);
}

TEST_CASE("controller: an exception is caught, counted and retried", "[controller]") {
  Fixture f;
  f.reconciler.script["ns/a"] = {[]() -> ReconcileResult { throw std::runtime_error("oops"); }};
  f.controller->queue().add("ns/a");
  REQUIRE(run_until(f.io, [&] {
    return f.reconciler.calls["ns/a"] == 2 && f.controller->queue().processing() == 0;
  }));
  CHECK(
      f.metrics.render().find("controller_runtime_reconcile_panics_total{controller=\"test\"} 1") !=
      std::string::npos);
}

TEST_CASE("controller: owner handler maps children to their controller owner", "[controller]") {
  Fixture f;
  auto handler = f.controller->enqueue_controller_owner("app.example.com", "AppService");
  auto child = std::make_shared<rapidjson::Document>();
  child->Parse(R"({"metadata":{"namespace":"ns","name":"web-x","resourceVersion":"1",
    "ownerReferences":[{"apiVersion":"app.example.com/v1","kind":"AppService","name":"web",
    "uid":"u","controller":true}]}})");
  auto stranger = std::make_shared<rapidjson::Document>();
  stranger->Parse(R"({"metadata":{"namespace":"ns","name":"s","resourceVersion":"1",
    "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs",
    "uid":"u2","controller":true}]}})");
  handler(StoreChange{StoreChange::Type::added, nullptr, child});
  handler(StoreChange{StoreChange::Type::added, nullptr, stranger});
  REQUIRE(run_until(f.io, [&] { return f.reconciler.calls["ns/web"] == 1; }));
  CHECK(f.reconciler.calls.count("ns/rs") == 0);
  CHECK(f.reconciler.calls.count("ns/s") == 0);
}

TEST_CASE("controller: with an owner cache, children of owners outside it queue nothing",
          "[controller]") {
  Fixture f;
  ObjectStore owners;  // this shard's AppServices: only "mine"
  auto owner = std::make_shared<rapidjson::Document>();
  owner->Parse(R"({"metadata":{"namespace":"ns","name":"mine","resourceVersion":"1"}})");
  owners.apply(informer::Replace{{owner}});
  auto handler = f.controller->enqueue_controller_owner("app.example.com", "AppService", &owners);
  auto child_of = [](const char* name) {
    auto child = std::make_shared<rapidjson::Document>();
    child->Parse((std::string(R"({"metadata":{"namespace":"ns","name":")") + name +
                  R"(","resourceVersion":"1","ownerReferences":[{"apiVersion":"app.example.com/v1",
                  "kind":"AppService","name":")" +
                  name + R"(","uid":"u","controller":true}]}})")
                     .c_str());
    return child;
  };
  handler(StoreChange{StoreChange::Type::added, nullptr, child_of("theirs")});
  handler(StoreChange{StoreChange::Type::added, nullptr, child_of("mine")});
  REQUIRE(run_until(f.io, [&] { return f.reconciler.calls["ns/mine"] == 1; }));
  CHECK(f.reconciler.calls.count("ns/theirs") == 0);
}

TEST_CASE("controller: with skip_status_only, a status-only update queues nothing",
          "[controller]") {
  Fixture f;
  auto handler = f.controller->enqueue_self(Controller::Updates::skip_status_only);
  // name, resourceVersion, generation, finalizers, size, status message
  auto doc = [](const char* name, int rv, int generation, const char* finalizers, int size,
                const char* message) {
    auto d = std::make_shared<rapidjson::Document>();
    d->Parse(std::string(R"({"metadata":{"namespace":"ns","name":")") + name +
             R"(","resourceVersion":")" + std::to_string(rv) + R"(","generation":)" +
             std::to_string(generation) + R"(,"finalizers":)" + finalizers +
             R"(},"spec":{"size":)" + std::to_string(size) + R"(},"status":{"message":")" +
             message + R"("}})");
    REQUIRE_FALSE(d->HasParseError());
    return d;
  };
  // Our own status write: a new message and resourceVersion, nothing else.
  handler(StoreChange{StoreChange::Type::updated, doc("a", 1, 1, "[]", 1, "failed: uid 1"),
                      doc("a", 2, 1, "[]", 1, "failed: uid 2")});
  // A finalizer added: metadata the reconciler acts on.
  handler(StoreChange{StoreChange::Type::updated, doc("b", 1, 1, "[]", 1, "m"),
                      doc("b", 2, 1, R"(["x"])", 1, "m")});
  // A spec change.
  handler(StoreChange{StoreChange::Type::updated, doc("c", 1, 1, "[]", 1, "m"),
                      doc("c", 2, 2, "[]", 2, "m")});
  REQUIRE(run_until(
      f.io, [&] { return f.reconciler.calls["ns/b"] == 1 && f.reconciler.calls["ns/c"] == 1; }));
  CHECK(f.reconciler.calls.count("ns/a") == 0);

  // Without the option (the default), the status-only update queues the key.
  auto all = f.controller->enqueue_self();
  all(StoreChange{StoreChange::Type::updated, doc("a", 2, 1, "[]", 1, "failed: uid 2"),
                  doc("a", 3, 1, "[]", 1, "failed: uid 3")});
  REQUIRE(run_until(f.io, [&] { return f.reconciler.calls["ns/a"] == 1; }));
}

TEST_CASE("controller: initial-list adds and no-change updates queue low, live changes first",
          "[controller]") {
  asio::io_context io;
  RealClock clock;
  SeededRandom random{1};
  MetricsRegistry metrics;
  ScriptedReconciler reconciler{io};
  Controller::Options options;
  options.name = "priorities";
  Controller controller(io.get_executor(), options, reconciler, metrics, clock, random);  // not run
  auto self = controller.enqueue_self();
  auto owner = controller.enqueue_controller_owner("app.example.com", "AppService");
  auto object = [](const char* name, int rv, const char* owner_name = nullptr) {
    auto d = std::make_shared<rapidjson::Document>();
    std::string owners;
    if (owner_name) {
      owners = std::string(R"(,"ownerReferences":[{"apiVersion":"app.example.com/v1",)") +
               R"("kind":"AppService","name":")" + owner_name +
               R"(","uid":"u","controller":true}])";
    }
    d->Parse(std::string(R"({"metadata":{"namespace":"ns","name":")") + name +
             R"(","resourceVersion":")" + std::to_string(rv) + "\"" + owners + "}}");
    REQUIRE_FALSE(d->HasParseError());
    return d;
  };
  using T = StoreChange::Type;
  self(StoreChange{T::added, nullptr, object("listed", 1), true});
  owner(StoreChange{T::added, nullptr, object("listed-child", 1, "child-owner"), true});
  self(StoreChange{T::updated, object("resynced", 2), object("resynced", 2)});
  self(StoreChange{T::updated, object("edited", 2), object("edited", 3)});
  self(StoreChange{T::added, nullptr, object("created", 1)});
  owner(StoreChange{T::deleted, object("gone-child", 1, "gone-owner"),
                    object("gone-child", 1, "gone-owner")});
  std::vector<std::pair<std::string, int>> order;
  while (auto item = controller.queue().get_with_priority()) {
    order.emplace_back(item->key, item->priority);
    controller.queue().done(item->key);
  }
  CHECK(order == std::vector<std::pair<std::string, int>>{{"ns/edited", 0},
                                                          {"ns/created", 0},
                                                          {"ns/gone-owner", 0},
                                                          {"ns/listed", kLowPriority},
                                                          {"ns/child-owner", kLowPriority},
                                                          {"ns/resynced", kLowPriority}});
}

TEST_CASE("controller: a retry keeps the key's priority unless the result names one",
          "[controller]") {
  Fixture f(1);
  f.reconciler.held.insert("ns/a");  // every reconcile of ns/a waits for gate.cancel()
  f.reconciler.script["ns/a"] = {[] { return ReconcileResult::requeue(0ms); },
                                 [] {
                                   auto r = ReconcileResult::requeue(0ms);
                                   r.priority = 5;
                                   return r;
                                 }};
  f.controller->queue().add("ns/a", kLowPriority);
  REQUIRE(run_until(f.io, [&] { return f.reconciler.in_flight["ns/a"] == 1; }));
  f.controller->queue().add("ns/b", kLowPriority);
  f.controller->queue().add("ns/c", kLowPriority);
  f.reconciler.gate.cancel();
  // Requeued at its own low priority: behind ns/b and ns/c, which waited first.
  REQUIRE(run_until(f.io, [&] {
    return f.reconciler.calls["ns/a"] == 1 && f.reconciler.in_flight["ns/a"] == 1;
  }));
  CHECK(f.reconciler.order == std::vector<std::string>{"ns/a", "ns/b", "ns/c", "ns/a"});
  // The second pass asks for priority 5: it comes back before a low key that waited longer.
  f.controller->queue().add("ns/e", kLowPriority);
  f.reconciler.held.clear();
  f.reconciler.gate.cancel();
  REQUIRE(run_until(f.io, [&] {
    return f.reconciler.calls["ns/e"] == 1 && f.controller->queue().processing() == 0;
  }));
  CHECK(f.reconciler.order ==
        std::vector<std::string>{"ns/a", "ns/b", "ns/c", "ns/a", "ns/a", "ns/e"});
}

TEST_CASE("controller: resyncs queue every key at low priority", "[controller]") {
  Fixture f(1, 20ms, {"a"});
  f.reconciler.held.insert("ns/a");  // the first resync's reconcile stays in flight
  REQUIRE(run_until(f.io, [&] { return f.reconciler.in_flight["ns/a"] == 1; }));
  // The next resync re-adds it while in flight; a live change arrives after that.
  REQUIRE(run_until(f.io, [&] {
    return f.metrics.render().find(
               "workqueue_depth{controller=\"test\",name=\"test\",priority=\"-100\"} 1") !=
           std::string::npos;
  }));
  f.controller->queue().add("ns/live");
  f.reconciler.held.clear();
  f.reconciler.gate.cancel();
  REQUIRE(run_until(f.io, [&] { return f.reconciler.calls["ns/a"] >= 2; }));
  CHECK(f.reconciler.order[0] == "ns/a");
  CHECK(f.reconciler.order[1] == "ns/live");
}

TEST_CASE("controller: every key of the resync store is queued again each sync period",
          "[controller]") {
  Fixture f(4, 40ms, {"a", "b"});
  // Nothing was added by hand: every reconcile comes from a resync, at least three rounds.
  REQUIRE(run_until(
      f.io, [&] { return f.reconciler.calls["ns/a"] >= 3 && f.reconciler.calls["ns/b"] >= 3; }));
}

TEST_CASE("controller: the heap is released once per idle spell, not after every reconcile",
          "[controller]") {
  asio::io_context io;
  RealClock clock;
  SeededRandom random{3};
  MetricsRegistry metrics;
  ScriptedReconciler reconciler{io};
  int releases = 0;
  Controller::Options options;
  options.name = "idle";
  options.release_heap_after_idle = 1s;
  options.release_heap = [&] { ++releases; };
  Controller controller(io.get_executor(), options, reconciler, metrics, clock, random);
  bool finished = false;
  asio::co_spawn(io, controller.run(), [&](std::exception_ptr) { finished = true; });

  // Keys trickle in one at a time: the queue goes idle between each, for far less than 1 s
  // (unless the machine stalls the test that long, which the check allows for).
  auto last = std::chrono::steady_clock::now();
  auto longest_gap = std::chrono::steady_clock::duration::zero();
  for (int i = 0; i < 10; ++i) {
    const std::string key = "ns/k" + std::to_string(i);
    controller.queue().add(key);
    REQUIRE(run_until(
        io, [&] { return reconciler.calls[key] == 1 && controller.queue().processing() == 0; }));
    const auto now = std::chrono::steady_clock::now();
    longest_gap = std::max(longest_gap, now - last);
    last = now;
  }
  if (longest_gap < 500ms) CHECK(releases == 0);
  REQUIRE(run_until(io, [&] { return releases == 1; }));
  // Idle with nothing done since: no second release.
  io.run_for(1500ms);
  CHECK(releases == 1);
  // New work, then idle again: one more.
  controller.queue().add("ns/again");
  REQUIRE(run_until(io, [&] { return releases == 2; }));
  CHECK(reconciler.calls["ns/again"] == 1);

  controller.shut_down();
  REQUIRE(run_until(io, [&] { return finished; }));
}

TEST_CASE("controller: --reconcile-timeout gives each reconcile a deadline and counts overruns",
          "[controller]") {
  Fixture f(3, 0ms, {}, 100ms);
  f.reconciler.held.insert("ns/slow");
  // The slow reconcile's requests would fail at the deadline; it returns that error.
  f.reconciler.script["ns/slow"] = {[] { return ReconcileResult::error("deadline exceeded"); }};
  const auto before = std::chrono::steady_clock::now();
  f.controller->queue().add("ns/fast");
  f.controller->queue().add("ns/slow");
  REQUIRE(run_until(f.io, [&] { return f.reconciler.calls["ns/fast"] == 1; }));
  REQUIRE(run_until(f.io, [&] { return f.reconciler.in_flight["ns/slow"] == 1; }));
  REQUIRE(f.reconciler.deadlines.size() == 2);
  for (const auto& deadline : f.reconciler.deadlines) {
    REQUIRE(deadline.has_value());
    CHECK(*deadline >= before + 100ms);
    CHECK(*deadline <= std::chrono::steady_clock::now() + 100ms);
  }
  // Past the deadline the held reconcile ends (as its cut requests would make it).
  const auto deadline = *f.reconciler.deadlines[1];
  REQUIRE(run_until(f.io, [&] { return std::chrono::steady_clock::now() > deadline; }));
  f.reconciler.gate.cancel();
  f.reconciler.held.clear();
  // Retried with backoff like any error; the retry is in time and not counted.
  REQUIRE(run_until(f.io, [&] {
    return f.reconciler.calls["ns/slow"] == 2 && f.controller->queue().processing() == 0;
  }));
  auto text = f.metrics.render();
  CHECK(text.find("controller_runtime_reconcile_timeouts_total{controller=\"test\"} 1") !=
        std::string::npos);
  CHECK(text.find("controller_runtime_reconcile_errors_total{controller=\"test\"} 1") !=
        std::string::npos);
}

TEST_CASE("controller: without --reconcile-timeout there is no deadline, the metric reads 0",
          "[controller]") {
  Fixture f;
  f.controller->queue().add("ns/a");
  REQUIRE(run_until(f.io, [&] { return f.reconciler.calls["ns/a"] == 1; }));
  REQUIRE(f.reconciler.deadlines.size() == 1);
  CHECK_FALSE(f.reconciler.deadlines[0].has_value());
  CHECK(f.metrics.render().find(
            "controller_runtime_reconcile_timeouts_total{controller=\"test\"} 0") !=
        std::string::npos);
}

namespace {

rapidjson::Document written(const std::string& name, const std::string& rv) {
  rapidjson::Document doc;
  doc.Parse((R"({"metadata":{"namespace":"ns","name":")" + name +
             R"(","uid":"uid-1","resourceVersion":")" + rv + R"("}})")
                .c_str());
  return doc;
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

// A controller with a write tracker over one cache, whose newest resourceVersion the test sets,
// and a write of ns/a at resourceVersion 105 recorded while the cache is at 100.
struct Tracked {
  ObjectStore cache;
  std::string newest = "100";
  WriteTracker tracker;
  Fixture f;
  explicit Tracked(std::chrono::milliseconds stale_cache_retry)
      : f(1, 0ms, {}, 0ms, &tracker, stale_cache_retry) {
    tracker.add_cache(cache, "test cache", [this] { return newest; });
    tracker.record(cache, "ns/a", written("a", "105"));
  }
};

const std::string kStaleMetric =
    "controller_runtime_reconcile_stale_cache_total{controller=\"test\"}";

}  // namespace

TEST_CASE("controller: a key whose cache is behind its own last write waits, then reconciles",
          "[controller][write_tracker]") {
  Tracked t(30ms);
  auto& f = t.f;
  CHECK(has_line(f.metrics.render(), kStaleMetric + " 0"));  // on /metrics from the start
  f.controller->queue().add("ns/a");
  f.controller->queue().add("ns/b");  // not written: not held
  REQUIRE(run_until(f.io, [&] { return f.reconciler.calls["ns/b"] == 1; }));
  // Held back and requeued every 30 ms while the cache stays behind; never reconciled.
  REQUIRE(run_until(
      f.io, [&] { return f.metrics.render().find(kStaleMetric + " 3") != std::string::npos; }));
  CHECK(f.reconciler.calls["ns/a"] == 0);
  // Not an error, not the rate limiter, not a reconcile.
  CHECK(f.controller->queue().num_requeues("ns/a") == 0);
  const auto text = f.metrics.render();
  CHECK(has_line(text, "controller_runtime_reconcile_errors_total{controller=\"test\"} 0"));
  CHECK(has_line(text,
                 "controller_runtime_reconcile_total{controller=\"test\",result=\"success\"} 1"));

  t.newest = "105";  // the informer observed our write
  REQUIRE(run_until(f.io, [&] { return f.reconciler.calls["ns/a"] == 1; }));
  CHECK(t.tracker.size() == 0);
}

TEST_CASE("controller: the informer's event for our write brings a held key back at once",
          "[controller][write_tracker]") {
  // A fallback requeue far beyond the test's deadline: only the event can bring the key back.
  Tracked t(1h);
  auto& f = t.f;
  f.controller->queue().add("ns/a");
  REQUIRE(run_until(f.io, [&] { return has_line(f.metrics.render(), kStaleMetric + " 1"); }));
  f.io.run_for(20ms);
  CHECK(f.reconciler.calls["ns/a"] == 0);
  t.newest = "105";
  auto handler = f.controller->enqueue_self();
  StoreChange change;
  change.type = StoreChange::Type::updated;
  change.old_object = std::make_shared<rapidjson::Document>(written("a", "100"));
  change.new_object = std::make_shared<rapidjson::Document>(written("a", "105"));
  handler(change);
  REQUIRE(run_until(
      f.io, [&] { return f.reconciler.calls["ns/a"] == 1; }, 2s));
}

TEST_CASE("controller: an owner's deletion drops the write tracker's records of its key",
          "[controller][write_tracker]") {
  Tracked t(1h);
  auto& f = t.f;
  StoreChange change;
  change.type = StoreChange::Type::deleted;
  change.old_object = std::make_shared<rapidjson::Document>(written("a", "105"));
  f.controller->enqueue_self()(change);
  CHECK(t.tracker.size() == 0);
  REQUIRE(run_until(
      f.io, [&] { return f.reconciler.calls["ns/a"] == 1; }, 2s));
}

// The controller's waits follow its clock (issue 45): with a FakeClock, a requeue_after(1h) runs
// again as soon as the test steps the clock an hour, not an hour later, and not before the step.
TEST_CASE("controller: with a fake clock, requeue_after(1h) fires at a step of 1h, 100 times",
          "[controller]") {
  asio::io_context io;
  FakeClock clock;
  SeededRandom random{42};
  MetricsRegistry metrics;
  ScriptedReconciler reconciler{io};
  constexpr int kRounds = 100;
  for (int i = 0; i < kRounds; ++i) {
    reconciler.script["ns/a"].push_back([] { return ReconcileResult::requeue(1h); });
  }
  Controller::Options options;
  options.name = "test";
  Controller controller(io.get_executor(), options, reconciler, metrics, clock, random);
  bool finished = false;
  asio::co_spawn(io, controller.run(), [&](std::exception_ptr) { finished = true; });
  controller.queue().add("ns/a");
  const auto start = std::chrono::steady_clock::now();
  for (int round = 1; round <= kRounds; ++round) {
    INFO("round " << round);
    REQUIRE(run_until(io, [&] {
      return reconciler.calls["ns/a"] == round && controller.queue().processing() == 0 &&
             controller.queue().waiting() == 1;
    }));
    clock.step(59min);  // not yet due: nothing runs
    io.run_for(5ms);
    REQUIRE(reconciler.calls["ns/a"] == round);
    clock.step(1min);
  }
  REQUIRE(run_until(io, [&] { return reconciler.calls["ns/a"] == kRounds + 1; }));
  const auto took = std::chrono::steady_clock::now() - start;
  // Printed, not asserted: real time depends on the machine's load.
  WARN("100 requeue_after(1h) reconciles in "
       << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms real time");
  controller.shut_down();
  REQUIRE(run_until(io, [&] { return finished; }));
}

TEST_CASE("controller: with a fake clock, the resync comes when the clock reaches its period",
          "[controller]") {
  asio::io_context io;
  FakeClock clock;
  FakeRandom random(0.5);  // the period's jitter factor is exactly 1.0
  MetricsRegistry metrics;
  ScriptedReconciler reconciler{io};
  ObjectStore store;
  informer::Replace list;
  auto doc = std::make_shared<rapidjson::Document>();
  doc->Parse(R"({"metadata":{"namespace":"ns","name":"a","resourceVersion":"1"}})");
  list.items.push_back(doc);
  store.apply(std::move(list));
  Controller::Options options;
  options.name = "test";
  options.resync_period = 10h;
  options.resync_store = &store;
  Controller controller(io.get_executor(), options, reconciler, metrics, clock, random);
  bool finished = false;
  asio::co_spawn(io, controller.run(), [&](std::exception_ptr) { finished = true; });
  io.run_for(20ms);
  clock.step(9h + 59min);
  io.run_for(20ms);
  CHECK(reconciler.calls["ns/a"] == 0);
  clock.step(1min);
  REQUIRE(run_until(io, [&] { return reconciler.calls["ns/a"] == 1; }));
  controller.shut_down();
  REQUIRE(run_until(io, [&] { return finished; }));
}
