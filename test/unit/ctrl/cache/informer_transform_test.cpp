// SPDX-License-Identifier: Apache-2.0
// The informer's transform hook against a fake API server: every listed item and every watched
// object passes through it before the store keeps it; without one, managedFields are dropped.

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "ctrl/base/clock.h"
#include "ctrl/cache/informer.h"
#include "ctrl/object/object_meta.h"
#include "support/async_test.h"
#include "support/fake_api_server.h"

namespace {

namespace asio = boost::asio;
using kube::testing::FakeApiServer;
using Reply = FakeApiServer::Reply;
using namespace std::chrono_literals;

const char* kManagedFields =
    R"([{"manager":"appservice-operator","operation":"Update","apiVersion":"v1",)"
    R"("time":"2024-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}},)"
    R"({"manager":"kube-controller-manager","operation":"Update","subresource":"status",)"
    R"("fieldsType":"FieldsV1","fieldsV1":{"f:status":{}}}])";

std::string config_map(const std::string& name, const std::string& rv) {
  return R"({"metadata":{"namespace":"ns","name":")" + name + R"(","resourceVersion":")" + rv +
         R"(","uid":"uid-)" + name + R"(","managedFields":)" + kManagedFields +
         R"(},"data":{"a":"1"}})";
}

// Lists one ConfigMap (listed), then watches: ADDED of another (watched) and a bookmark.
Reply serve(const FakeApiServer::Request& r) {
  if (r.target.find("watch=1") != std::string::npos) {
    return Reply::stream_of({R"({"type":"ADDED","object":)" + config_map("watched", "11") + "}\n",
                             R"({"type":"BOOKMARK","object":{"kind":"ConfigMap",)"
                             R"("apiVersion":"v1","metadata":{"resourceVersion":"12"}}})"
                             "\n"},
                            /*stall=*/true);
  }
  return Reply::json(200, R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":)"
                          R"({"resourceVersion":"10"},"items":[)" +
                              config_map("listed", "9") + "]}");
}

// Runs an informer with `options` until both ConfigMaps are cached; returns what it saw.
struct Seen {
  ctrl::ObjectPtr listed;
  ctrl::ObjectPtr watched;
};

Seen run_informer(ctrl::Informer::Options options) {
  asio::io_context io;
  FakeApiServer server(io, serve);
  ctrl::FakeClock clock;
  ctrl::FakeRandom random;
  options.collection = kube::ResourcePath::from_api_version("v1", "configmaps").in_namespace("ns");
  ctrl::Informer informer(io.get_executor(), kube::testing::rest_client_for(io, server),
                          std::move(options), clock, random);
  Seen seen;
  auto body = [&]() -> asio::awaitable<void> {
    asio::co_spawn(io, informer.run(), asio::detached);
    asio::steady_timer timer(io);
    while (informer.store().size() < 2) {
      timer.expires_after(5ms);
      co_await timer.async_wait(asio::use_awaitable);
    }
    seen.listed = informer.store().get("ns/listed");
    seen.watched = informer.store().get("ns/watched");
    informer.stop();
  };
  kube::testing::run_async(io, body(), [&] { server.stop(); });
  return seen;
}

std::string managed_fields_json(const ctrl::ObjectPtr& object) {
  REQUIRE(object);
  const auto& meta = (*object)["metadata"];
  if (!meta.HasMember("managedFields")) return "(none)";
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  meta["managedFields"].Accept(writer);
  return buffer.GetString();
}

}  // namespace

TEST_CASE("informer: without a transform, cached objects have no managedFields",
          "[informer][transform]") {
  auto seen = run_informer({});
  CHECK(managed_fields_json(seen.listed) == "(none)");
  CHECK(managed_fields_json(seen.watched) == "(none)");
  CHECK(std::string((*seen.listed)["data"]["a"].GetString()) == "1");
}

TEST_CASE("informer: the transform sees every listed and watched object before it is cached",
          "[informer][transform]") {
  int calls = 0;
  ctrl::Informer::Options options;
  options.transform = [&calls](rapidjson::Document& d) {
    ++calls;
    ctrl::summarize_managed_fields(d);
    // A transform may also drop what no reader needs.
    d.RemoveMember("data");
  };
  auto seen = run_informer(std::move(options));
  const std::string summary =
      R"([{"manager":"appservice-operator","operation":"Update"},)"
      R"({"manager":"kube-controller-manager","operation":"Update","subresource":"status"}])";
  CHECK(managed_fields_json(seen.listed) == summary);
  CHECK(managed_fields_json(seen.watched) == summary);
  CHECK_FALSE(seen.listed->HasMember("data"));
  CHECK_FALSE(seen.watched->HasMember("data"));
  // List items get their kind back before the transform sees them.
  CHECK(std::string((*seen.listed)["kind"].GetString()) == "ConfigMap");
  // One call per object: the bookmark is not an object to cache.
  CHECK(calls == 2);
}
