// SPDX-License-Identifier: Apache-2.0
// The test kit's private control plane (asop::testing, docs/testing.md): the disruptions a test
// can make to a control plane of its own, and a controller that converges through them. Tagged
// [private]: test/e2e/kit_shared_controlplane_test.sh runs them (each starts a control plane).
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

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

// A source made (by apply, which a retry after a lost answer cannot turn into a conflict) and its
// copy waited for.
void converges(TestClient& client, const std::string& ns, const std::string& name) {
  const auto configmaps = kConfigMap.collection().in_namespace(ns);
  REQUIRE_EVENTUALLY(
      client.apply(configmaps.named(name), configmap(name, R"({"kit":"source"})")).ok(), 60s);
  REQUIRE_EVENTUALLY(client.get(configmaps.named(name + "-copy")).ok(), 60s);
}

}  // namespace

TEST_CASE("kit private: the API server restarted: the controller converges after it",
          "[kit][private]") {
  auto cp = ControlPlane::start_private();
  TestNamespace ns(*cp, current_test_name());
  TestClient client(*cp);
  TestApp app(*cp, {.ns = ns.name()});
  auto reconciler = add_copy_controller(app.app());
  app.start();
  converges(client, ns, "before");
  cp->restart("kube-apiserver");
  converges(client, ns, "after");
  CHECK(app.stop() == 0);
}

TEST_CASE("kit private: etcd compacted, the API server restarted: the informers list again",
          "[kit][private]") {
  auto cp = ControlPlane::start_private();
  TestNamespace ns(*cp, current_test_name());
  TestClient client(*cp);
  // An informer's list is a watch that sends the initial events (streaming list); a resumed watch
  // does not.
  std::atomic<int> lists{0};
  FaultProxy proxy(*cp, {.on_request = [&lists](const std::string&, const std::string& target) {
    if (target.find("/configmaps") != std::string::npos &&
        target.find("sendInitialEvents=true") != std::string::npos) {
      ++lists;
    }
  }});
  TestApp app(*cp, {.ns = ns.name(), .kubeconfig = proxy.kubeconfig()});
  auto reconciler = add_copy_controller(app.app());
  app.start();
  converges(client, ns, "before");
  const int before = lists;
  CHECK(before >= 2);  // one per informer at least (a list retried under load counts twice)
  // With the API server down (no bookmark moves the informers on), etcd is compacted past every
  // resourceVersion they hold: they have nothing to resume a watch from.
  cp->stop("kube-apiserver");
  cp->compact_etcd();
  cp->restart("kube-apiserver");
  converges(client, ns, "after");
  REQUIRE_EVENTUALLY(lists >= before + 2, 60s);  // both informers listed again (410)
  CHECK(app.stop() == 0);
}
