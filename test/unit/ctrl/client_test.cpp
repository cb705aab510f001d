// SPDX-License-Identifier: Apache-2.0
// ctrl::Client: every write records itself for read-your-own-writes under the reconcile's key, in
// the caches that hold what was written; a DELETE forgets; a write that ends in the object's
// deletion holds the key until the object leaves the cache; a 409 becomes a quiet requeue.

#include "ctrl/client.h"

#include <rapidjson/document.h>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "ctrl/base/clock.h"
#include "ctrl/kind.h"
#include "support/async_test.h"
#include "support/fake_api_server.h"

namespace asio = boost::asio;
using kube::testing::FakeApiServer;
using Reply = FakeApiServer::Reply;

namespace {

const ctrl::Kind kConfigMap{"v1", "ConfigMap", "configmaps"};

std::string configmap(const std::string& name, const std::string& rv,
                      const std::string& extra = "") {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns","name":")" + name +
         R"(","uid":"u-)" + name + R"(","resourceVersion":")" + rv +
         R"(","labels":{"role":"copy"})" + extra + "}}";
}

std::shared_ptr<rapidjson::Document> parsed(const std::string& json) {
  auto d = std::make_shared<rapidjson::Document>();
  d->Parse(json.c_str());
  return d;
}

struct Fixture {
  asio::io_context io;
  ctrl::FakeClock clock;
  ctrl::ObjectStore copies;
  ctrl::ObjectStore others;  // same resource, a selector the writes do not match
  std::string newest = "10";
  ctrl::WriteTracker tracker{clock};

  Fixture() {
    auto scope = [](std::string selector) {
      return ctrl::WriteTracker::Scope(kConfigMap.collection(), std::move(selector));
    };
    tracker.add_cache(
        copies, "copies", [this] { return newest; }, scope("role=copy"));
    tracker.add_cache(
        others, "others", [this] { return newest; }, scope("role=source"));
  }
  void cache(const std::string& json) { copies.apply(ctrl::informer::Upsert{parsed(json)}); }
};

}  // namespace

TEST_CASE("client: a write holds its key until the caches that hold the object observed it",
          "[client]") {
  Fixture f;
  FakeApiServer api(
      f.io, [](const FakeApiServer::Request&) { return Reply::json(200, configmap("a", "20")); });
  auto client = ctrl::make_client(*kube::testing::rest_client_for(f.io, api), f.tracker,
                                  ctrl::ObjectKey("ns", "owner"), "controller=test");
  auto body = [&]() -> asio::awaitable<void> {
    const auto path = kConfigMap.collection().in_namespace("ns").named("a");
    auto applied = co_await client.apply(path, kube::JsonBody("{}"), "test", "because");
    REQUIRE(applied);
  };
  kube::testing::run_async(f.io, body(), [&] { api.stop(); });
  CHECK(f.tracker.size() == 1);  // in "copies" only: "others" never sees a role=copy object
  auto behind = f.tracker.behind("ns/owner");
  REQUIRE(behind);
  CHECK(behind->cache == "copies");
  CHECK(behind->written == 20u);
  f.newest = "20";
  CHECK_FALSE(f.tracker.behind("ns/owner"));
}

TEST_CASE("client: a DELETE forgets the earlier writes of the object", "[client]") {
  Fixture f;
  int calls = 0;
  FakeApiServer api(f.io, [&](const FakeApiServer::Request&) {
    ++calls;
    return Reply::json(200, configmap("a", calls == 1 ? "20" : "21"));
  });
  auto client = ctrl::make_client(*kube::testing::rest_client_for(f.io, api), f.tracker,
                                  ctrl::ObjectKey("ns", "owner"), "controller=test");
  auto body = [&]() -> asio::awaitable<void> {
    const auto path = kConfigMap.collection().in_namespace("ns").named("a");
    auto applied = co_await client.apply(path, kube::JsonBody("{}"), "test", "because");
    REQUIRE(applied);
    REQUIRE(f.tracker.size() == 1);
    const kube::DeleteOptions options;
    auto removed = co_await client.remove(path, options, "because");
    REQUIRE(removed);
  };
  kube::testing::run_async(f.io, body(), [&] { api.stop(); });
  CHECK(f.tracker.size() == 0);
  CHECK_FALSE(f.tracker.behind("ns/owner"));
}

TEST_CASE("client: removing the last finalizer of a deleting object holds until it is gone",
          "[client]") {
  Fixture f;
  const std::string deleting = R"(,"deletionTimestamp":"2024-01-01T00:00:00Z")";
  // The cache holds the deleting object at rv 30; the server answers the PATCH with rv 30 too
  // (it deletes the object now), so "the cache has rv 30" says nothing.
  const std::string cached = configmap("a", "30", deleting + R"(,"finalizers":["mine"])");
  f.cache(cached);
  f.newest = "30";
  std::string sent;
  FakeApiServer api(f.io, [&](const FakeApiServer::Request& r) {
    sent = r.body;
    return Reply::json(200, configmap("a", "30", deleting));
  });
  auto client = ctrl::make_client(*kube::testing::rest_client_for(f.io, api), f.tracker,
                                  ctrl::ObjectKey("ns", "a"), "controller=test");
  auto body = [&]() -> asio::awaitable<void> {
    const auto path = kConfigMap.collection().in_namespace("ns").named("a");
    auto object = f.copies.get("ns/a");
    auto removed = co_await client.remove_finalizer(path, *object, "mine", "cleaned up");
    REQUIRE(removed);
    CHECK(removed->status == 200);
    auto again =
        co_await client.remove_finalizer(path, *parsed(configmap("a", "31")), "mine", "cleaned up");
    REQUIRE(again);
    CHECK(again->status == 0);  // nothing to remove: nothing sent
  };
  kube::testing::run_async(f.io, body(), [&] { api.stop(); });
  CHECK(api.requests() == 1);
  CHECK(sent == R"([{"op":"test","path":"/metadata/finalizers/0","value":"mine"},)"
                R"({"op":"remove","path":"/metadata/finalizers/0"}])");
  REQUIRE(f.tracker.behind("ns/a"));  // the cache still shows the finalizer: cleanup would rerun
  f.newest = "32";
  REQUIRE(f.tracker.behind("ns/a"));  // a newer rv elsewhere says nothing either
  f.copies.apply(ctrl::informer::Delete{parsed(cached)});
  CHECK_FALSE(f.tracker.behind("ns/a"));
}

TEST_CASE("reconcile result: a 409 is a quiet requeue, anything else an error", "[client]") {
  kube::ApiError conflict;
  conflict.code = kube::make_error_code(kube::Errc::conflict);
  conflict.http_status = 409;
  conflict.reason = "Conflict";
  auto r = ctrl::ReconcileResult::failed("removing finalizer", conflict);
  CHECK(r.kind == ctrl::ReconcileResult::Kind::conflict);
  CHECK(r.message.rfind("removing finalizer: ", 0) == 0);
  kube::ApiError forbidden;
  forbidden.code = kube::make_error_code(kube::Errc::forbidden);
  forbidden.http_status = 403;
  CHECK(ctrl::ReconcileResult::failed("x", forbidden).kind == ctrl::ReconcileResult::Kind::error);
}

TEST_CASE("client: a finalizer guard that failed is a conflict, as a 409 is", "[client]") {
  Fixture f;
  // The API server's answer to a JSON patch whose test op failed (applyJSPatch): 422, not 409.
  FakeApiServer api(f.io, [](const FakeApiServer::Request&) {
    return Reply::json(
        422,
        R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422,)"
        R"("message":"the server rejected our request due to an error in our request: testing value /metadata/finalizers failed: test failed"})");
  });
  auto client = ctrl::make_client(*kube::testing::rest_client_for(f.io, api), f.tracker,
                                  ctrl::ObjectKey("ns", "a"), "controller=test");
  auto body = [&]() -> asio::awaitable<void> {
    const auto path = kConfigMap.collection().in_namespace("ns").named("a");
    auto added = co_await client.add_finalizer(path, *parsed(configmap("a", "40")), "mine");
    REQUIRE_FALSE(added);
    CHECK(added.error().is(kube::Errc::conflict));
    CHECK(added.error().http_status == 422);  // the server's words are kept
    const std::string with = R"(,"finalizers":["mine"])";
    auto removed =
        co_await client.remove_finalizer(path, *parsed(configmap("a", "41", with)), "mine", "done");
    REQUIRE_FALSE(removed);
    CHECK(removed.error().is(kube::Errc::conflict));
  };
  kube::testing::run_async(f.io, body(), [&] { api.stop(); });
  CHECK(api.requests() == 2);
  CHECK(f.tracker.size() == 0);
}

TEST_CASE("client: another 422 stays an error", "[client]") {
  Fixture f;
  FakeApiServer api(f.io, [](const FakeApiServer::Request&) {
    return Reply::json(
        422, R"({"kind":"Status","status":"Failure","reason":"Invalid","code":422,)"
             R"("message":"ConfigMap \"a\" is invalid: metadata.finalizers[0]: Invalid value"})");
  });
  auto client = ctrl::make_client(*kube::testing::rest_client_for(f.io, api), f.tracker,
                                  ctrl::ObjectKey("ns", "a"), "controller=test");
  auto body = [&]() -> asio::awaitable<void> {
    const auto path = kConfigMap.collection().in_namespace("ns").named("a");
    auto added = co_await client.add_finalizer(path, *parsed(configmap("a", "40")), "bad name");
    REQUIRE_FALSE(added);
    CHECK(added.error().is(kube::Errc::invalid));
  };
  kube::testing::run_async(f.io, body(), [&] { api.stop(); });
}

TEST_CASE("client: a DELETE that leaves the object being deleted is a write the cache must see",
          "[client]") {
  Fixture f;
  int calls = 0;
  FakeApiServer api(f.io, [&](const FakeApiServer::Request&) {
    ++calls;
    if (calls == 1) {  // foreground: the object stays, with deletionTimestamp and a finalizer
      return Reply::json(200, configmap("a", "50",
                                        R"(,"deletionTimestamp":"2024-01-01T00:00:00Z",)"
                                        R"("finalizers":["foregroundDeletion"])"));
    }
    return Reply::json(404,
                       R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404})");
  });
  auto client = ctrl::make_client(*kube::testing::rest_client_for(f.io, api), f.tracker,
                                  ctrl::ObjectKey("ns", "owner"), "controller=test");
  auto body = [&]() -> asio::awaitable<void> {
    const auto path = kConfigMap.collection().in_namespace("ns").named("a");
    const kube::DeleteOptions options;
    auto removed = co_await client.remove(path, options, "because");
    REQUIRE(removed);
    auto behind = f.tracker.behind("ns/owner");
    REQUIRE(behind);  // until the cache shows rv 50, the next reconcile would DELETE again
    CHECK(behind->written == 50u);
    // Gone already when we ask again: the 404 forgets what we wrote.
    auto again = co_await client.remove(path, options, "because");
    REQUIRE_FALSE(again);
    CHECK(again.error().is(kube::Errc::not_found));
  };
  kube::testing::run_async(f.io, body(), [&] { api.stop(); });
  CHECK(f.tracker.size() == 0);
  CHECK_FALSE(f.tracker.behind("ns/owner"));
}

TEST_CASE("client: update_status_if_changed writes only a status that differs", "[client]") {
  Fixture f;
  FakeApiServer api(f.io, [](const FakeApiServer::Request&) {
    return Reply::json(200, configmap("a", "30", R"(},"status":{"phase":"Ready")"));
  });
  auto client = ctrl::make_client(*kube::testing::rest_client_for(f.io, api), f.tracker,
                                  ctrl::ObjectKey("ns", "a"), "controller=test");
  const auto cached = parsed(configmap("a", "20", R"(},"status":{"phase":"Ready")"));
  rapidjson::Document same;
  same.Parse(R"({"phase":"Ready"})");
  rapidjson::Document changed;
  changed.Parse(R"({"phase":"Failed"})");
  auto body = [&]() -> asio::awaitable<void> {
    const auto path = kConfigMap.collection().in_namespace("ns").named("a");
    auto unchanged = co_await client.update_status_if_changed(path, *cached, same, "same");
    REQUIRE(unchanged);
    CHECK(unchanged->status == 0);  // nothing sent
    CHECK(api.seen().empty());
    auto written = co_await client.update_status_if_changed(path, *cached, changed, "phase");
    REQUIRE(written);
    CHECK(written->status == 200);
  };
  kube::testing::run_async(f.io, body(), [&] { api.stop(); });
  REQUIRE(api.seen().size() == 1);
  const auto& put = api.seen()[0];
  CHECK(put.method == boost::beast::http::verb::put);
  CHECK(put.target == "/api/v1/namespaces/ns/configmaps/a/status");
  rapidjson::Document sent;
  sent.Parse(put.body.c_str());
  CHECK(std::string(sent["status"]["phase"].GetString()) == "Failed");
  // Guarded by the cached resourceVersion; the rest of the object as cached.
  CHECK(std::string(sent["metadata"]["resourceVersion"].GetString()) == "20");
  CHECK(std::string(sent["metadata"]["labels"]["role"].GetString()) == "copy");
}
