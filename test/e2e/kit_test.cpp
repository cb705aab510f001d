// SPDX-License-Identifier: Apache-2.0
// The test kit (asop::testing, docs/testing.md) on the run's control plane: namespaces that are
// ready and then really go, the garbage collector, a controller on the test's clock
// (requeue_after(1h) at advance(1h)), settle() and writes().
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "asop/app.h"
#include "asop/client.h"
#include "asop/object.h"
#include "asop/owner.h"
#include "asop/testing/catch.h"
#include "asop/testing/control_plane.h"
#include "asop/testing/test_app.h"
#include "asop/testing/test_client.h"
#include "asop/testing/test_namespace.h"
#include "kit_support.h"

namespace {

using namespace std::chrono_literals;
using namespace asop::testing;
using namespace kit;

const auto kNamespaces = asop::ResourcePath::from_api_version("v1", "namespaces");

bool gone(TestClient& client, const asop::ResourcePath& object) {
  auto r = client.get(object);
  return !r && r.error().is(asop::Errc::not_found);
}

// Reconciles each key once, then asks to run again in an hour.
class HourlyReconciler final : public asop::Reconciler {
 public:
  std::atomic<int> runs{0};
  boost::asio::awaitable<asop::ReconcileResult> reconcile(asop::Request,
                                                          const asop::ReconcileContext&) override {
    ++runs;
    co_return asop::ReconcileResult::requeue(1h);
  }
};

}  // namespace

TEST_CASE("kit: a test namespace is ready with its ServiceAccount, and really goes", "[kit]") {
  auto& cp = ControlPlane::shared();
  TestClient client(cp);
  std::string name;
  {
    const auto start = std::chrono::steady_clock::now();
    TestNamespace ns(cp, asop::testing::current_test_name());
    WARN("namespace " << ns.name() << " ready in "
                      << std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - start)
                             .count()
                      << " ms");
    name = ns.name();
    CHECK(name.rfind("kit-a-test-namespace-is-ready-", 0) == 0);
    CHECK(client
              .get(asop::ResourcePath::from_api_version("v1", "serviceaccounts")
                       .in_namespace(name)
                       .named("default"))
              .ok());
  }
  // The namespace controller empties it and removes it: not Terminating forever.
  REQUIRE_EVENTUALLY(gone(client, kNamespaces.named(name)), 60s);
}

TEST_CASE("kit: deleting an owner removes its child (the garbage collector runs)", "[kit]") {
  auto& cp = ControlPlane::shared();
  TestNamespace ns(cp, asop::testing::current_test_name());
  TestClient client(cp);
  const auto configmaps = kConfigMap.collection().in_namespace(ns);
  auto owner = client.create(configmaps, configmap("owner"));
  REQUIRE(owner);
  const std::string uid(asop::meta_uid(*owner->body));
  REQUIRE(client.create(
      configmaps, configmap("child", "{}",
                            R"([{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":")" +
                                uid + R"("}])")));
  REQUIRE(client.remove(configmaps.named("owner")));
  const auto start = std::chrono::steady_clock::now();
  REQUIRE_EVENTUALLY(gone(client, configmaps.named("child")), 30s);
  WARN("child collected " << std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::steady_clock::now() - start)
                                 .count()
                          << " ms after its owner's deletion");
}

TEST_CASE("kit: requeue_after(1h) runs again at advance(1h), 100 times in a row", "[kit]") {
  auto& cp = ControlPlane::shared();
  TestNamespace ns(cp, asop::testing::current_test_name());
  TestClient client(cp);
  TestApp app(cp, {.ns = ns.name()});
  HourlyReconciler hourly;
  auto& labelled = app->informer(kConfigMap, "kit=hourly");
  app->controller("hourly").for_kind(kConfigMap, labelled).complete(hourly);
  app.start();
  REQUIRE(client.create(kConfigMap.collection().in_namespace(ns),
                        configmap("clock", R"({"kit":"hourly"})")));
  REQUIRE_EVENTUALLY(hourly.runs == 1, 30s);
  REQUIRE(app.settle());  // the next run is an hour away
  CHECK(hourly.runs == 1);

  const auto start = std::chrono::steady_clock::now();
  for (int round = 2; round <= 101; ++round) {
    app.advance(1h);
    REQUIRE_EVENTUALLY(hourly.runs == round, 10s);
  }
  WARN("100 rounds of advance(1h) in " << std::chrono::duration_cast<std::chrono::milliseconds>(
                                              std::chrono::steady_clock::now() - start)
                                              .count()
                                       << " ms of real time");
  REQUIRE(app.settle());
  CHECK(hourly.runs == 101);
  CHECK(app.stop() == 0);
}

TEST_CASE("kit: settle() waits for a controller at rest and writes() counts its writes", "[kit]") {
  auto& cp = ControlPlane::shared();
  TestNamespace ns(cp, asop::testing::current_test_name());
  TestClient client(cp);
  TestApp app(cp, {.ns = ns.name()});
  auto reconciler = add_copy_controller(app.app());
  app.start();
  const auto configmaps = kConfigMap.collection().in_namespace(ns);
  for (const char* name : {"a", "b", "c"}) {
    REQUIRE(client.create(configmaps, configmap(name, R"({"kit":"source"})")));
  }
  REQUIRE(app.settle());
  for (const char* name : {"a", "b", "c"}) {
    CHECK(client.get(configmaps.named(std::string(name) + "-copy")).ok());
  }
  // Server-side apply creates answer 201.
  INFO("writes: " << app.writes().text());
  CHECK(app.writes().count("PATCH", "201") == 3);
  CHECK(app.writes().total() == 3);
  REQUIRE_CONSISTENTLY(app.writes().total() == 3, 2s);

  // A deleted copy is put back: one write more, then rest again.
  REQUIRE(client.remove(configmaps.named("b-copy")));
  REQUIRE_EVENTUALLY(client.get(configmaps.named("b-copy")).ok(), 30s);
  REQUIRE(app.settle());
  CHECK(app.writes().count("PATCH", "201") == 4);
  CHECK(app.stop() == 0);
}
