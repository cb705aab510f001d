// SPDX-License-Identifier: Apache-2.0
// configmap-sync's tests: the controller on a real control plane (asop::testing, docs/testing.md).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <string>

#include "asop/testing/catch.h"
#include "asop/testing/control_plane.h"
#include "asop/testing/test_app.h"
#include "asop/testing/test_client.h"
#include "asop/testing/test_namespace.h"
#include "configmap_sync_controller.h"

using namespace std::chrono_literals;
using namespace asop::testing;
using configmap_sync::kConfigMap;

namespace {

const auto kNamespaces = asop::ResourcePath::from_api_version("v1", "namespaces");

// The source, named so that no other source in the cluster shares its name.
std::string source(const std::string& greeting) {
  const std::string metadata =
      R"({"name":"kit-settings","labels":{"configmap-sync.example.com/source":"true"}})";
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":)" + metadata +
         R"(,"data":{"greeting":")" + greeting + R"("}})";
}

void ask_for_copies(TestClient& client, const std::string& ns, bool ask) {
  const std::string value = ask ? R"("true")" : "null";
  REQUIRE(
      client.patch(kNamespaces.named(ns), asop::PatchType::merge,
                   R"({"metadata":{"labels":{"configmap-sync.example.com/sync":)" + value + "}}}"));
}

}  // namespace

TEST_CASE("a source is copied where asked, kept equal, and its copies go with it") {
  auto& cluster = ControlPlane::shared();
  TestNamespace from(cluster, current_test_name()), to(cluster, "copies");
  TestClient client(cluster);
  ask_for_copies(client, to, true);

  TestApp app(cluster, {.name = "configmap-sync"});  // every namespace, as deployed
  auto reconciler = configmap_sync::add_controller(app.app());
  app.start();

  const auto original = kConfigMap.collection().in_namespace(from);
  const auto copy = kConfigMap.collection().in_namespace(to).named("kit-settings");
  REQUIRE(client.create(original, source("hello")));
  REQUIRE_EVENTUALLY(client.field(copy, "data.greeting") == "hello", 30s);
  CHECK(client.field(original.named("kit-settings"), "metadata.finalizers") ==
        configmap_sync::kFinalizer);

  // At rest it writes nothing; a hand edit of the copy is put back.
  REQUIRE(app.settle());
  const auto at_rest = app.writes().total();
  REQUIRE_CONSISTENTLY(app.writes().total() == at_rest, 2s);
  REQUIRE(client.patch(copy, asop::PatchType::merge, R"({"data":{"greeting":"edited"}})"));
  REQUIRE_EVENTUALLY(client.field(copy, "data.greeting") == "hello", 30s);

  // A namespace that stops asking loses its copy.
  ask_for_copies(client, to, false);
  REQUIRE_EVENTUALLY(!client.get(copy).ok(), 30s);
  ask_for_copies(client, to, true);
  REQUIRE_EVENTUALLY(client.field(copy, "data.greeting") == "hello", 30s);

  // Deleting the source deletes its copies, then the finalizer lets the source go.
  REQUIRE(client.remove(original.named("kit-settings")));
  REQUIRE_EVENTUALLY(!client.get(original.named("kit-settings")).ok(), 30s);
  CHECK(!client.get(copy).ok());
  CHECK(app.stop() == 0);
}
