// The Event recorder against a real kube-apiserver (test/controlplane/up.sh): Events about a
// ConfigMap must show up in `kubectl describe` (found by involvedObject kind/name/namespace/uid),
// and a repeat must be one Event with count 2 ("x2 over"), written with a real strategic merge
// patch. Also: a repeat of an Event deleted meanwhile creates it again.

#include <rapidjson/document.h>
#include <sys/wait.h>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>

#include "../unit/kube/async_test.h"
#include "ctrl/clock.h"
#include "ctrl/event.h"
#include "ctrl/event_recorder.h"
#include "ctrl/metrics_registry.h"
#include "kube/kubeconfig.h"
#include "kube/rest_client.h"

namespace asio = boost::asio;
using asio::awaitable;
using ctrl::EventRecorder;
using ctrl::EventType;
using kube::ResourcePath;
using kube::RestClient;
using kube::testing::run_async;
using namespace std::chrono_literals;

namespace {

const auto kNamespaces = ResourcePath::from_api_version("v1", "namespaces");
const auto kConfigMaps = ResourcePath::from_api_version("v1", "configmaps");
const auto kEvents = ResourcePath::from_api_version("v1", "events");

std::string kubeconfig_path() {
  const char* path = std::getenv("KUBECONFIG");
  REQUIRE(path != nullptr);
  return path;
}

std::shared_ptr<RestClient> client_for(asio::io_context& io) {
  kube::HttpTransport::Options options;
  options.request_timeout = 10s;
  return std::make_shared<RestClient>(std::make_shared<kube::HttpTransport>(
      io.get_executor(), kube::Kubeconfig::load_file(kubeconfig_path()).resolve(), options, nullptr,
      std::make_shared<kube::RequestMetrics>()));
}

std::string str(const rapidjson::Value& v) {
  REQUIRE(v.IsString());
  return {v.GetString(), v.GetStringLength()};
}

// kubectl as a user runs it (KUBECONFIG from the environment); its stdout and exit status.
std::pair<int, std::string> kubectl(const std::string& args) {
  FILE* pipe = ::popen(("kubectl " + args + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// The line of `text` that contains `needle`, or "" (describe prints one line per Event).
std::string line_with(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) return line;
  }
  return {};
}

// Runs `body` in a fresh namespace, deleted afterwards even when the body fails.
awaitable<void> in_namespace(RestClient& client, std::function<awaitable<void>(std::string)> body) {
  std::random_device rd;
  const std::string ns = "ev-" + std::to_string(rd() % 1000000);
  auto created = co_await client.create(
      kNamespaces, R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns + "\"}}");
  REQUIRE(created.ok());
  std::exception_ptr failure;
  try {
    co_await body(ns);
  } catch (...) {
    failure = std::current_exception();
  }
  auto deleted = co_await client.delete_(kNamespaces.named(ns));
  if (failure) std::rethrow_exception(failure);
  CHECK(deleted.ok());
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
  auto client = client_for(io);
  ctrl::RealClock clock;
  ctrl::MetricsRegistry metrics;
  std::string ns;
  const std::string name = "events-subject";
  run_async(io,
            in_namespace(
                *client,
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
                  const auto [status, out] = kubectl("describe configmap " + name + " -n " + ns);
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
