// SPDX-License-Identifier: Apache-2.0
// The Event recorder against a real kube-apiserver (test/controlplane/up.sh): Events about a
// ConfigMap must show up in `kubectl describe` (found by involvedObject kind/name/namespace/uid),
// and a repeat must be one Event with count 2 ("x2 over"), written with a real strategic merge
// patch. Also: a repeat of an Event deleted meanwhile creates it again.

#include <rapidjson/document.h>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>

#include "ctrl/base/clock.h"
#include "ctrl/events/event.h"
#include "ctrl/events/event_recorder.h"
#include "ctrl/metrics/metrics_registry.h"
#include "e2e_support.h"
#include "kube/api/rest_client.h"
#include "support/async_test.h"

namespace asio = boost::asio;
using asio::awaitable;
using ctrl::EventRecorder;
using ctrl::EventType;
using kube::ResourcePath;
using kube::RestClient;
using kube::testing::run_async;
using namespace std::chrono_literals;

namespace {

const auto kConfigMaps = ResourcePath::from_api_version("v1", "configmaps");
const auto kEvents = ResourcePath::from_api_version("v1", "events");

std::string str(const rapidjson::Value& v) {
  REQUIRE(v.IsString());
  return {v.GetString(), v.GetStringLength()};
}

// The line of `text` that contains `needle`, or "" (describe prints one line per Event).
std::string line_with(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) return line;
  }
  return {};
}

EventRecorder::Options recorder_options() {
  EventRecorder::Options o;
  o.component = "appservice-operator";
  o.instance = "e2e-host";
  o.retry_delay = 100ms;
  return o;
}

}  // namespace

TEST_CASE("kubectl describe shows recorded Events, a repeat as one Event with x2",
          "[e2e][events]") {
  asio::io_context io;
  auto client = e2e::client_for(io, e2e::kubeconfig_path());
  ctrl::RealClock clock;
  ctrl::MetricsRegistry metrics;
  std::string ns;
  const std::string name = "events-subject";
  run_async(io,
            e2e::in_namespace(
                *client, e2e::unique_name("ev"),
                [&](std::string n) -> awaitable<void> {
                  ns = n;
                  auto cm = co_await client->create(
                      kConfigMaps.in_namespace(ns),
                      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
                          R"("},"data":{"k":"v"}})");
                  REQUIRE(cm.ok());
                  const auto& meta = (*cm->body)["metadata"];
                  ctrl::ObjectReference ref("v1", "ConfigMap", ns, name, str(meta["uid"]));

                  EventRecorder rec(io.get_executor(), client, recorder_options(), clock, &metrics);
                  rec.record(ref, EventType::warning, "SyncFailed", "cannot reach backend");
                  REQUIRE(co_await rec.flush(10s));
                  // A flush in between makes the repeat a real PATCH, not a queued create
                  // that absorbed it.
                  rec.record(ref, EventType::warning, "SyncFailed", "cannot reach backend");
                  rec.record(ref, EventType::normal, "Synced", "data is up to date");
                  REQUIRE(co_await rec.flush(10s));
                  CHECK(rec.pending() == 0);

                  // kubectl describe looks Events up while the namespace still exists.
                  const auto [status, out] = e2e::kubectl(
                      "describe configmap " + name + " -n " + ns + " 2>&1", e2e::kubeconfig_path());
                  INFO(out);
                  REQUIRE(status == 0);
                  CHECK(out.find("Events:") != std::string::npos);
                  const std::string warning = line_with(out, "SyncFailed");
                  CHECK(warning.find("Warning") != std::string::npos);
                  CHECK(warning.find("(x2 over") != std::string::npos);
                  CHECK(warning.find("appservice-operator") != std::string::npos);
                  CHECK(warning.find("cannot reach backend") != std::string::npos);
                  const std::string normal = line_with(out, "Synced ");
                  CHECK(normal.find("Normal") != std::string::npos);
                  CHECK(normal.find("(x") == std::string::npos);
                  CHECK(normal.find("data is up to date") != std::string::npos);

                  // Two Event objects, not three: the repeat was a patch.
                  kube::ListOptions opts;
                  opts.field_selector = "involvedObject.uid=" + ref.uid;
                  auto events = co_await client->list(kEvents.in_namespace(ns), opts);
                  REQUIRE(events.ok());
                  const auto& items = (*events->body)["items"];
                  REQUIRE(items.Size() == 2);
                  std::string warning_name;
                  for (const auto& e : items.GetArray()) {
                    if (str(e["reason"]) != "SyncFailed") continue;
                    warning_name = str(e["metadata"]["name"]);
                    CHECK(e["count"].GetInt() == 2);
                    CHECK(str(e["source"]["component"]) == "appservice-operator");
                    CHECK(str(e["reportingInstance"]) == "e2e-host");
                    CHECK(warning_name.rfind(name + ".", 0) == 0);
                  }
                  REQUIRE_FALSE(warning_name.empty());

                  // The Event goes away (TTL, or deleted): the next repeat creates it again
                  // under the same name with the count so far.
                  auto gone =
                      co_await client->delete_(kEvents.in_namespace(ns).named(warning_name));
                  REQUIRE(gone.ok());
                  rec.record(ref, EventType::warning, "SyncFailed", "cannot reach backend");
                  REQUIRE(co_await rec.flush(10s));
                  auto again = co_await client->get(kEvents.in_namespace(ns).named(warning_name));
                  REQUIRE(again.ok());
                  CHECK((*again->body)["count"].GetInt() == 3);
                  CHECK(str((*again->body)["involvedObject"]["uid"]) == ref.uid);
                }),
            {}, 60s);
  const std::string text = metrics.render();
  CHECK(text.find("event_recorder_events_total{result=\"created\"} 3") != std::string::npos);
  CHECK(text.find("event_recorder_events_total{result=\"patched\"} 1") != std::string::npos);
  CHECK(text.find("event_recorder_events_total{result=\"failed\"} 0") != std::string::npos);
}
