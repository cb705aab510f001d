// SPDX-License-Identifier: Apache-2.0
// The builder wires a controller to the manager's shared cache: the primary's own keys, the
// controller owner of an owned child (only an owner in the primary's cache), and whatever a
// watches() mapper names; Manager::informer gives one informer per kind and label selector.

#include "ctrl/builder.h"

#include <rapidjson/document.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cache/informer_test_support.h"
#include "ctrl/base/clock.h"
#include "ctrl/manager.h"
#include "ctrl/metrics/metrics_registry.h"
#include "ctrl/object/object_meta.h"
#include "kube/http/http_transport.h"
#include "support/fake_api_server.h"

namespace asio = boost::asio;
using kube::testing::FakeApiServer;
using namespace std::chrono_literals;

namespace {

const ctrl::Kind kConfigMap{"v1", "ConfigMap", "configmaps"};
const ctrl::Kind kNamespace{"v1", "Namespace", "namespaces", ctrl::Kind::Scope::cluster};

std::string list(const std::string& kind, const std::string& items) {
  return R"({"kind":")" + kind + R"(List","apiVersion":"v1","metadata":{"resourceVersion":"5"},)" +
         R"("items":[)" + items + "]}";
}

std::string configmap(const std::string& name, const std::string& owner = "") {
  std::string owners;
  if (!owner.empty()) {
    owners = R"(,"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":")" + owner +
             R"(","uid":"u-)" + owner + R"(","controller":true}])";
  }
  return R"({"metadata":{"namespace":"ns","name":")" + name +
         R"(","resourceVersion":"1","uid":"u-)" + name + R"(")" + owners + "}}";
}

// Records each key; shuts the manager down once `want` keys were seen.
class KeyRecorder final : public ctrl::Reconciler {
 public:
  KeyRecorder(ctrl::Manager& manager, std::size_t want) : manager_(manager), want_(want) {}
  std::set<std::string> keys;

  asio::awaitable<ctrl::ReconcileResult> reconcile(ctrl::Request request,
                                                   const ctrl::ReconcileContext&) override {
    keys.insert(request.key());
    if (keys.size() == want_) manager_.request_shutdown();
    co_return ctrl::ReconcileResult::done();
  }

 private:
  ctrl::Manager& manager_;
  std::size_t want_;
};

struct Fixture {
  asio::io_context io;
  FakeApiServer server{
      io, [](const FakeApiServer::Request& r) {
        using ctrl::testing::has;
        if (ctrl::testing::is_watch(r)) return ctrl::testing::quiet_watch();
        if (has(r, "/namespaces?")) {
          return FakeApiServer::Reply::json(
              200, list("Namespace", R"({"metadata":{"name":"x","uid":"nx"}})"));
        }
        if (has(r, "role%3Dchild") || has(r, "role=child")) {
          // One child of a cached primary, one of an owner not in the cache.
          return FakeApiServer::Reply::json(
              200, list("ConfigMap", configmap("child", "a") + "," + configmap("stray", "zz")));
        }
        return FakeApiServer::Reply::json(200, list("ConfigMap", configmap("a")));
      }};
  ctrl::RealClock clock;
  ctrl::SeededRandom random{7};
  ctrl::MetricsRegistry metrics;
  std::shared_ptr<kube::RestClient> client;

  Fixture() {
    kube::RestConfig c;
    c.scheme = "http";
    c.host = "127.0.0.1";
    c.port = std::to_string(server.port());
    client = std::make_shared<kube::RestClient>(std::make_shared<kube::HttpTransport>(
        io.get_executor(), c, kube::HttpTransport::Options{}, nullptr, nullptr));
  }

  static ctrl::Manager::Options options() {
    ctrl::Manager::Options o;
    o.metrics_bind_address = "0";
    o.health_probe_bind_address = "0";
    o.cache.stream_lists = false;
    return o;
  }
};

}  // namespace

TEST_CASE("manager: informer() shares one informer per kind and label selector", "[builder]") {
  Fixture f;
  ctrl::Manager manager(f.io, Fixture::options(), f.client, f.metrics, f.clock, f.random);
  auto& a = manager.informer(kConfigMap, "role=primary");
  CHECK(&manager.informer(kConfigMap, "role=primary") == &a);
  CHECK(&manager.informer(kConfigMap, "role=child") != &a);
  CHECK(&manager.informer(kNamespace) != &a);
}

TEST_CASE("builder: for_kind, owns and watches queue the keys they name", "[builder]") {
  Fixture f;
  ctrl::Manager manager(f.io, Fixture::options(), f.client, f.metrics, f.clock, f.random);
  auto& primaries = manager.informer(kConfigMap, "role=primary");
  auto& children = manager.informer(kConfigMap, "role=child");
  auto& namespaces = manager.informer(kNamespace);
  KeyRecorder reconciler(manager, 2);
  ctrl::Controller::Options co;
  co.name = "test";
  ctrl::ControllerBuilder(manager, co)
      .for_kind(kConfigMap, primaries)
      .owns(children)
      .watches(namespaces,
               [](const ctrl::StoreChange& change) {
                 return std::vector<ctrl::Request>{
                     ctrl::Request("ns", "for-" + ctrl::object_key(*change.new_object))};
               })
      .complete(reconciler);
  asio::steady_timer guard(f.io, 10s);
  guard.async_wait([&](boost::system::error_code ec) {
    if (!ec) manager.request_shutdown();
  });
  CHECK(manager.run() == ctrl::Manager::kExitOk);
  guard.cancel();
  f.server.stop();
  f.io.restart();
  f.io.run_for(200ms);
  // "ns/a" from the primary and from its child, "ns/for-x" from the mapper; never "ns/zz".
  CHECK(reconciler.keys == std::set<std::string>{"ns/a", "ns/for-x"});
}

TEST_CASE("builder: the caches it wires are registered with the controller's write tracker",
          "[builder]") {
  Fixture f;
  ctrl::Manager manager(f.io, Fixture::options(), f.client, f.metrics, f.clock, f.random);
  auto& primaries = manager.informer(kConfigMap, "role=primary");
  auto& children = manager.informer(kConfigMap, "role=child");
  auto written = [](const std::string& name, const std::string& rv, const std::string& role) {
    rapidjson::Document d;
    d.Parse((R"({"metadata":{"namespace":"ns","name":")" + name + R"(","uid":"u-)" + name +
             R"(","resourceVersion":")" + rv + R"(","labels":{"role":")" + role + R"("}}})")
                .c_str());
    return d;
  };
  KeyRecorder reconciler(manager, 1);
  ctrl::Controller::Options co;
  co.name = "test";
  auto& controller = ctrl::ControllerBuilder(manager, co)
                         .for_kind(kConfigMap, primaries)
                         .owns(children)
                         .complete(reconciler);
  ctrl::WriteTracker& tracker = controller.write_tracker();
  tracker.record(primaries.store(), "ns/a", written("a", "10", "primary"));
  tracker.record(children.store(), "ns/a", written("child", "11", "child"));
  CHECK(tracker.size() == 2);
  // A write by path goes to the caches whose selector holds what was written.
  const auto configmaps = kConfigMap.collection().in_namespace("ns");
  tracker.record_write(configmaps.named("b"), "ns/b", written("b", "12", "primary"));
  tracker.record_write(configmaps.named("c"), "ns/b", written("c", "13", "child"));
  tracker.record_write(configmaps.named("d"), "ns/b", written("d", "14", "neither"));
  CHECK(tracker.size() == 4);
}
