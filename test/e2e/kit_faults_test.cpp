// SPDX-License-Identifier: Apache-2.0
// The test kit's FaultProxy (asop::testing, docs/testing.md), one self-test per fault kind: a
// controller behind it (each labelled ConfigMap gets an owned copy) still converges, and the
// proxy acted exactly as its rule says: a 409, 429, 500 once on the write; a 410 once on the
// watch; watch bytes delayed; watches cut; a write's answer stalled past the reconcile's deadline.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "asop/app.h"
#include "asop/client.h"
#include "asop/object.h"
#include "asop/owner.h"
#include "asop/testing/catch.h"
#include "asop/testing/control_plane.h"
#include "asop/testing/fault_proxy.h"
#include "asop/testing/test_app.h"
#include "asop/testing/test_client.h"
#include "asop/testing/test_namespace.h"
#include "kit_support.h"

namespace {

using namespace std::chrono_literals;
using namespace asop::testing;
using namespace kit;

// The controller behind `proxy`, in a namespace of its own, with one rule; `body` runs once the
// caches synced.
template <class Body>
void behind_proxy(FaultRule rule, std::vector<std::string> flags, Body body) {
  auto& cp = ControlPlane::shared();
  TestNamespace ns(cp, asop::testing::current_test_name());
  TestClient client(cp);
  FaultProxy proxy(cp);
  const int id = proxy.add(rule);
  TestApp app(cp, {.ns = ns.name(), .kubeconfig = proxy.kubeconfig(), .flags = flags});
  auto reconciler = add_copy_controller(app.app());
  app.start();
  body(ns.name(), client, proxy, id, app);
  CHECK(app.stop() == 0);
}

// Creates a source and waits for its copy.
void converges(TestClient& client, const std::string& ns, const std::string& name) {
  const auto configmaps = kConfigMap.collection().in_namespace(ns);
  REQUIRE(client.create(configmaps, configmap(name, R"({"kit":"source"})")));
  REQUIRE_EVENTUALLY(client.get(configmaps.named(name + "-copy")).ok(), 60s);
}

}  // namespace

// 409: a conflict, requeued quietly; 429: sent again by the client after Retry-After; 500: an
// error, retried with the rate limiter's backoff. Each once, then the create goes through.
TEST_CASE("kit faults: a 409, 429 or 500 once on the write, then written once", "[kit][faults]") {
  const int status = GENERATE(409, 429, 500);
  DYNAMIC_SECTION("status " << status) {
    FaultRule rule{.verb = "PATCH", .path_contains = "/configmaps/", .status = status};
    behind_proxy(rule, {},
                 [status](const std::string& ns, TestClient& client, FaultProxy& proxy, int id,
                          TestApp& app) {
                   converges(client, ns, "a");
                   CHECK(proxy.hits(id) == 1);
                   REQUIRE(app.settle());
                   INFO("writes: " << app.writes().text());
                   CHECK(app.writes().count("PATCH", std::to_string(status)) == 1);
                   CHECK(app.writes().count("PATCH", "201") == 1);
                 });
  }
}

TEST_CASE("kit faults: a 410 once on a watch: the informer lists again", "[kit][faults]") {
  FaultRule rule{.verb = "GET",
                 .path_contains = "/configmaps",
                 .watch = FaultRule::Watch::only,
                 .status = 410};
  behind_proxy(rule, {},
               [](const std::string& ns, TestClient& client, FaultProxy& proxy, int id, TestApp&) {
                 REQUIRE_EVENTUALLY(proxy.hits(id) == 1, 30s);
                 converges(client, ns, "a");
                 CHECK(proxy.hits(id) == 1);
               });
}

TEST_CASE("kit faults: watch events delayed 1 s: converges, each copy written once",
          "[kit][faults]") {
  FaultRule rule{
      .watch = FaultRule::Watch::only, .action = FaultRule::Action::delay, .delay = 1s, .times = 0};
  behind_proxy(
      rule, {},
      [](const std::string& ns, TestClient& client, FaultProxy& proxy, int id, TestApp& app) {
        for (const char* name : {"a", "b", "c"}) converges(client, ns, name);
        CHECK(proxy.hits(id) >= 2);  // both informers' watches
        REQUIRE(app.settle(2s));
        INFO("writes: " << app.writes().text());
        CHECK(app.writes().count("PATCH", "201") == 3);  // read your own writes: no second create
        CHECK(app.writes().total() == 3);
      });
}

TEST_CASE("kit faults: watches cut after 300 ms, 4 times: the informers watch again",
          "[kit][faults]") {
  FaultRule rule{.path_contains = "/configmaps",
                 .watch = FaultRule::Watch::only,
                 .action = FaultRule::Action::cut,
                 .delay = 300ms,
                 .times = 4};
  behind_proxy(rule, {},
               [](const std::string& ns, TestClient& client, FaultProxy& proxy, int id, TestApp&) {
                 REQUIRE_EVENTUALLY(proxy.hits(id) == 4, 60s);
                 converges(client, ns, "a");
               });
}

// The proxy passes the PATCH on and stalls its answer: the server made the copy, the client gave
// up at the reconcile's deadline, and the retry finds the copy in the cache: no second write.
TEST_CASE("kit faults: a write whose answer stalls ends at the reconcile's deadline",
          "[kit][faults]") {
  FaultRule rule{
      .verb = "PATCH", .path_contains = "/configmaps/", .action = FaultRule::Action::stall};
  behind_proxy(
      rule, {"--reconcile-timeout=2s"},
      [](const std::string& ns, TestClient& client, FaultProxy& proxy, int id, TestApp& app) {
        converges(client, ns, "a");
        CHECK(proxy.hits(id) == 1);
        REQUIRE(app.settle());
        INFO("writes: " << app.writes().text());
        CHECK(app.writes().count("PATCH", "<error>") == 1);
        CHECK(app.writes().total() == 1);
      });
}
