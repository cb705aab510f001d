// SPDX-License-Identifier: Apache-2.0
// The Event recorder: the pure correlator (aggregation, spam filter, repeat cache) stepped with a
// FakeClock, the JSON it writes, and the sender against a fake API server (create, patch, 404
// fallback, retries, coalescing and the bounded queue).

#include "ctrl/events/event_recorder.h"

#include <rapidjson/document.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "ctrl/base/clock.h"
#include "ctrl/events/event.h"
#include "ctrl/events/event_correlator.h"
#include "ctrl/events/event_spam_filter.h"
#include "ctrl/metrics/metrics_registry.h"
#include "support/async_test.h"
#include "support/fake_api_server.h"
#include "support/heap_in_use.h"

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::awaitable;
using ctrl::EventCorrelator;
using ctrl::EventRecorder;
using ctrl::EventType;
using ctrl::EventWrite;
using ctrl::FakeClock;
using ctrl::ObjectReference;
using kube::testing::FakeApiServer;
using kube::testing::run_async;
using namespace std::chrono_literals;
using Action = EventWrite::Action;

namespace {

ObjectReference config_map(std::string name = "cm", std::string uid = "uid-1") {
  return ObjectReference("v1", "ConfigMap", "ns", std::move(name), std::move(uid));
}

rapidjson::Document parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

std::string str(const rapidjson::Value& v) {
  REQUIRE(v.IsString());
  return {v.GetString(), v.GetStringLength()};
}

// The hex suffix client-go gives a name: UnixNano of the Event's time.
std::string hex_nanos(ctrl::Clock::WallTime t) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch());
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(ns.count()));
  return buf;
}

}  // namespace

TEST_CASE("first occurrence creates an Event with count 1", "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  const auto w = c.observe(config_map(), EventType::warning, "BackOff", "retrying");
  REQUIRE(w.action == Action::create);
  CHECK(w.event.count == 1);
  CHECK(w.event.ns == "ns");
  CHECK(w.event.name == "cm." + hex_nanos(clock.wall_now()));
  CHECK(w.event.first_timestamp == clock.wall_now());
  CHECK(w.event.last_timestamp == clock.wall_now());
  CHECK(w.event.reason == "BackOff");
  CHECK(w.event.message == "retrying");
  CHECK(w.event.type == EventType::warning);
  CHECK(w.event.involved.uid == "uid-1");
}

TEST_CASE("an exact repeat patches the same Event with count+1 and a later lastTimestamp",
          "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  const auto first = c.observe(config_map(), EventType::warning, "BackOff", "retrying");
  const auto t0 = clock.wall_now();
  clock.step(30s);
  const auto second = c.observe(config_map(), EventType::warning, "BackOff", "retrying");
  REQUIRE(second.action == Action::patch);
  CHECK(second.event.name == first.event.name);
  CHECK(second.event.count == 2);
  CHECK(second.event.first_timestamp == t0);
  CHECK(second.event.last_timestamp == t0 + 30s);

  clock.step(9min);  // still within 10 minutes of the last occurrence
  const auto third = c.observe(config_map(), EventType::warning, "BackOff", "retrying");
  REQUIRE(third.action == Action::patch);
  CHECK(third.event.name == first.event.name);
  CHECK(third.event.count == 3);
  CHECK(third.event.first_timestamp == t0);
  CHECK(c.cached_events() == 1);

  // The PATCH carries what client-go's EventLogger patches, nothing else.
  const auto patch = parse(ctrl::event_patch_body(third.event));
  CHECK(patch.MemberCount() == 3);
  CHECK(patch["count"].GetInt() == 3);
  CHECK(str(patch["lastTimestamp"]) == "2024-01-01T00:09:30Z");
  CHECK(str(patch["message"]) == "retrying");
}

TEST_CASE("a different message, reason, type or object starts a new Event", "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  const auto base = c.observe(config_map(), EventType::warning, "BackOff", "retrying");
  REQUIRE(base.action == Action::create);

  const auto other_message = c.observe(config_map(), EventType::warning, "BackOff", "again");
  const auto other_reason = c.observe(config_map(), EventType::warning, "Failed", "retrying");
  const auto other_type = c.observe(config_map(), EventType::normal, "BackOff", "retrying");
  // Same name, new uid: a recreated object is another object to kubectl describe.
  const auto other_uid =
      c.observe(config_map("cm", "uid-2"), EventType::warning, "BackOff", "retrying");
  for (const auto* w : {&other_message, &other_reason, &other_type, &other_uid}) {
    CHECK(w->action == Action::create);
    CHECK(w->event.count == 1);
    CHECK(w->event.name != base.event.name);
  }
  // Names stay unique even though the fake clock did not move.
  CHECK(other_message.event.name != other_reason.event.name);
  CHECK(other_reason.event.name != other_type.event.name);
  CHECK(other_type.event.name != other_uid.event.name);

  // The original is still aggregated separately.
  const auto repeat = c.observe(config_map(), EventType::warning, "BackOff", "retrying");
  CHECK(repeat.action == Action::patch);
  CHECK(repeat.event.name == base.event.name);
  CHECK(repeat.event.count == 2);
}

TEST_CASE("a repeat more than 10 minutes after the last one starts a new Event", "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  const auto first = c.observe(config_map(), EventType::normal, "Synced", "ok");
  clock.step(10min);  // exactly the window: client-go resets only when the interval exceeds it
  const auto at_window = c.observe(config_map(), EventType::normal, "Synced", "ok");
  CHECK(at_window.action == Action::patch);
  CHECK(at_window.event.count == 2);

  clock.step(10min + 1s);
  const auto later = c.observe(config_map(), EventType::normal, "Synced", "ok");
  REQUIRE(later.action == Action::create);
  CHECK(later.event.count == 1);
  CHECK(later.event.name != first.event.name);
  CHECK(later.event.first_timestamp == clock.wall_now());

  // And the new Event aggregates from then on.
  clock.step(1s);
  const auto again = c.observe(config_map(), EventType::normal, "Synced", "ok");
  CHECK(again.action == Action::patch);
  CHECK(again.event.name == later.event.name);
  CHECK(again.event.count == 2);
}

TEST_CASE("25 new Events per object pass at once, then one per 5 minutes", "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  const auto step = [](int i) { return "Step" + std::to_string(i); };
  for (int i = 0; i < 25; ++i) {
    INFO("event " << i);
    REQUIRE(c.observe(config_map(), EventType::normal, step(i), "m").action == Action::create);
  }
  // Over the limit: dropped, and nothing is remembered of it.
  CHECK(c.observe(config_map(), EventType::normal, step(25), "m").action == Action::drop);
  CHECK(c.cached_events() == 25);

  // Other objects have their own bucket.
  CHECK(c.observe(config_map("other", "uid-9"), EventType::normal, step(0), "m").action ==
        Action::create);

  clock.step(4min + 59s);
  CHECK(c.observe(config_map(), EventType::normal, step(25), "m").action == Action::drop);
  clock.step(1s);  // 5 minutes since the bucket emptied: one token
  CHECK(c.observe(config_map(), EventType::normal, step(25), "m").action == Action::create);
  CHECK(c.observe(config_map(), EventType::normal, step(26), "m").action == Action::drop);

  // A long quiet spell refills to the burst, not beyond.
  clock.step(24h);
  int passed = 0;
  for (int i = 0; i < 40; ++i) {
    if (c.observe(config_map(), EventType::normal, "Late" + std::to_string(i), "m").action !=
        Action::drop) {
      ++passed;
    }
  }
  CHECK(passed == 25);
}

TEST_CASE("repeats have a budget of their own: a storm cannot starve a new Event", "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  const auto first = c.observe(config_map(), EventType::warning, "BackOff", "failing");
  REQUIRE(first.action == Action::create);
  for (int i = 0; i < 25; ++i) {
    INFO("repeat " << i);
    REQUIRE(c.observe(config_map(), EventType::warning, "BackOff", "failing").action ==
            Action::patch);
  }
  // The repeat budget is spent: dropped, and not counted.
  CHECK(c.observe(config_map(), EventType::warning, "BackOff", "failing").action == Action::drop);
  // In client-go one budget serves both, and this would be dropped too.
  CHECK(c.observe(config_map(), EventType::normal, "Created", "made it").action == Action::create);
  clock.step(5min);
  const auto refilled = c.observe(config_map(), EventType::warning, "BackOff", "failing");
  CHECK(refilled.action == Action::patch);
  CHECK(refilled.event.name == first.event.name);
  CHECK(refilled.event.count == 27);  // 1 + 25 + this one
}

TEST_CASE("the 10th different message of one reason in 10 minutes becomes a combined Event",
          "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  const auto failure = [](int i) { return "failure " + std::to_string(i); };
  for (int i = 0; i < 9; ++i) {
    INFO("message " << i);
    const auto w = c.observe(config_map(), EventType::warning, "ReconcileError", failure(i));
    REQUIRE(w.action == Action::create);
    CHECK(w.event.message == failure(i));
    clock.step(1min);  // the window runs from the last similar Event, not the first
  }
  const auto combined = c.observe(config_map(), EventType::warning, "ReconcileError", failure(9));
  REQUIRE(combined.action == Action::create);
  CHECK(combined.event.message == "(combined from similar events): failure 9");
  CHECK(combined.event.reason == "ReconcileError");
  CHECK(combined.event.type == EventType::warning);
  CHECK(combined.event.count == 1);
  CHECK(combined.event.involved.uid == "uid-1");

  // Every further different message counts on the combined Event, which shows the latest.
  clock.step(1s);
  const auto next = c.observe(config_map(), EventType::warning, "ReconcileError", failure(10));
  REQUIRE(next.action == Action::patch);
  CHECK(next.event.name == combined.event.name);
  CHECK(next.event.count == 2);
  CHECK(next.event.message == "(combined from similar events): failure 10");
  CHECK(next.event.first_timestamp == combined.event.first_timestamp);
  CHECK(next.event.last_timestamp == clock.wall_now());

  // Another reason, type or object is a group of its own.
  CHECK(c.observe(config_map(), EventType::warning, "Other", failure(11)).event.message ==
        failure(11));
  CHECK(c.observe(config_map(), EventType::normal, "ReconcileError", failure(12)).event.message ==
        failure(12));
  CHECK(c.observe(config_map("b", "uid-b"), EventType::warning, "ReconcileError", failure(13))
            .event.message == failure(13));

  // Ten minutes without a similar Event: the group starts over.
  clock.step(10min + 1s);
  const auto fresh = c.observe(config_map(), EventType::warning, "ReconcileError", failure(14));
  REQUIRE(fresh.action == Action::create);
  CHECK(fresh.event.message == failure(14));
}

TEST_CASE("a storm of varying errors costs at most 10 new Events, a later Created passes",
          "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  int created = 0, patched = 0;
  ctrl::EventRecord last;
  for (int i = 0; i < 200; ++i) {
    const auto w = c.observe(config_map(), EventType::warning, "ReconcileError",
                             "attempt " + std::to_string(i) + " failed");
    if (w.action == Action::create) ++created;
    if (w.action == Action::patch) ++patched;
    if (w.action != Action::drop) last = w.event;
    clock.step(10ms);
  }
  CHECK(created == 10);  // 9 Events, then the combined one
  CHECK(patched == 25);  // the repeat budget
  CHECK(last.count == 26);
  CHECK(last.message.starts_with("(combined from similar events): attempt 34 failed"));
  // Without aggregation the 25 new Events would have emptied the object's budget.
  const auto later = c.observe(config_map(), EventType::normal, "Created", "Created Deployment");
  CHECK(later.action == Action::create);
}

TEST_CASE("a combined message is cut to 1024 bytes too", "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  ctrl::EventWrite w;
  for (int i = 0; i < 10; ++i) {
    w = c.observe(config_map(), EventType::warning, "E",
                  std::to_string(i) + std::string(2000, 'x'));
  }
  CHECK(w.event.message.starts_with("(combined from similar events): 9xxx"));
  CHECK(w.event.message.size() == ctrl::kMaxEventMessageBytes);
}

TEST_CASE("the spam filter forgets the least recently used object when full", "[events]") {
  FakeClock clock;
  ctrl::EventSpamFilter::Options o;
  o.burst = 1;
  o.max_objects = 2;
  ctrl::EventSpamFilter f(clock, o);
  CHECK(f.allow(config_map("a", "ua")));
  clock.step(1s);
  CHECK(f.allow(config_map("b", "ub")));
  CHECK_FALSE(f.allow(config_map("b", "ub")));
  clock.step(1s);
  CHECK(f.allow(config_map("c", "uc")));  // evicts a, touched longest ago
  CHECK(f.tracked_objects() == 2);
  CHECK(f.allow(config_map("a", "ua")));  // a starts over with a full bucket
  CHECK_FALSE(f.allow(config_map("c", "uc")));
}

TEST_CASE("expired entries are dropped, and dropping them changes no decision", "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  const auto first = c.observe(config_map(), EventType::normal, "Created", "Created a");
  c.observe(config_map(), EventType::normal, "Created", "Created b");
  clock.step(9min);
  CHECK(c.expire() == 0);  // within the window: a repeat would still patch
  CHECK(c.observe(config_map(), EventType::normal, "Created", "Created a").action == Action::patch);
  clock.step(10min + 1s);
  c.expire();
  CHECK(c.cached_events() == 0);
  // Both spam buckets (two new Events, one repeat) have refilled by now.
  CHECK(c.tracked_objects() == 0);
  CHECK(c.empty());
  // As after the window without the sweep: a new Event with a new name, count 1.
  const auto again = c.observe(config_map(), EventType::normal, "Created", "Created a");
  CHECK(again.action == Action::create);
  CHECK(again.event.count == 1);
  CHECK(again.event.name != first.event.name);
}

TEST_CASE("a spam bucket stays until it has refilled, then goes", "[events]") {
  FakeClock clock;
  ctrl::EventSpamFilter f(clock);  // 25 tokens, one back every 5 minutes
  for (int i = 0; i < 25; ++i) REQUIRE(f.allow(config_map()));
  CHECK_FALSE(f.allow(config_map()));
  clock.step(2h);  // 24 tokens back: dropping the bucket would let 25 through
  CHECK(f.expire() == 0);
  clock.step(5min);
  CHECK(f.expire() == 1);
  CHECK(f.tracked_objects() == 0);
}

TEST_CASE("objects without a uid are told apart by kind, namespace and name", "[events]") {
  FakeClock clock;
  ctrl::EventSpamFilter::Options o;
  o.burst = 1;
  ctrl::EventSpamFilter f(clock, o);
  CHECK(f.allow(config_map("a", "")));
  CHECK(f.allow(config_map("b", "")));
  CHECK(f.allow(ObjectReference("v1", "Secret", "ns", "a", "")));
  CHECK_FALSE(f.allow(config_map("a", "")));
  CHECK(f.tracked_objects() == 3);
  CHECK(ctrl::object_key(config_map("a", "")) != ctrl::object_key(config_map("a", "uid-1")));
}

TEST_CASE("the Event caches name an object by its uid's 128 bits, or a hash of its key",
          "[events]") {
  const std::string uid = "5b1c3a2e-0f4d-4c8a-9e7b-00000000002a";
  const auto id = ctrl::object_id(config_map("a", uid));
  CHECK(id == ctrl::ObjectId{0x5b1c3a2e0f4d4c8aULL, 0x9e7b00000000002aULL});
  CHECK(ctrl::uid_object_id(uid) == id);
  // One digit apart, a different object; the same uid is the same object whatever its name.
  CHECK(ctrl::object_id(config_map("a", "5b1c3a2e-0f4d-4c8a-9e7b-00000000002b")) != id);
  CHECK(ctrl::object_id(config_map("renamed", uid)) == id);
  // Not in the API server's form: hashed, and still told apart.
  CHECK(ctrl::object_id(config_map("a", "uid-a")) != ctrl::object_id(config_map("a", "uid-b")));
  CHECK(ctrl::object_id(config_map("a", "uid-a")) == ctrl::uid_object_id("uid-a"));
  CHECK(ctrl::object_id(config_map("a", "")) != ctrl::object_id(config_map("b", "")));

  FakeClock clock;
  EventCorrelator c(clock);
  c.observe(config_map("a", uid), EventType::normal, "Created", "Created a");
  c.observe(config_map("b", "5b1c3a2e-0f4d-4c8a-9e7b-00000000002b"), EventType::normal, "Created",
            "Created b");
  c.forget(uid);
  CHECK(c.cached_events() == 1);
  CHECK(c.tracked_objects() == 1);
}

TEST_CASE("the repeat cache is bounded and evicts the Event seen longest ago", "[events]") {
  FakeClock clock;
  EventCorrelator::Options o;
  o.max_events = 2;
  EventCorrelator c(clock, o);
  const auto a = c.observe(config_map(), EventType::normal, "A", "m");
  clock.step(1s);
  c.observe(config_map(), EventType::normal, "B", "m");
  clock.step(1s);
  c.observe(config_map(), EventType::normal, "A", "m");  // touches A
  clock.step(1s);
  c.observe(config_map(), EventType::normal, "C", "m");  // evicts B
  CHECK(c.cached_events() == 2);
  CHECK(c.observe(config_map(), EventType::normal, "A", "m").event.name == a.event.name);
  CHECK(c.observe(config_map(), EventType::normal, "B", "m").action == Action::create);
}

TEST_CASE("a deleted object's Events and spam bucket are forgotten, others are kept", "[events]") {
  // Memory follows the live objects: a churn of created and deleted objects must not fill the
  // caches up to their 4096-entry bounds.
  FakeClock clock;
  EventCorrelator c(clock);
  c.observe(config_map("a", "uid-a"), EventType::normal, "Created", "Created a");
  c.observe(config_map("a", "uid-a"), EventType::normal, "Deleted", "Deleted a");
  const auto kept = c.observe(config_map("b", "uid-b"), EventType::normal, "Created", "Created b");
  // A uid that ends like another one ("uid-b" / "d-b") must not take its bucket along.
  c.observe(config_map("d", "d-b"), EventType::normal, "Created", "Created d");
  REQUIRE(c.cached_events() == 4);
  REQUIRE(c.tracked_objects() == 3);

  c.forget("uid-a");
  CHECK(c.cached_events() == 2);
  CHECK(c.tracked_objects() == 2);
  c.forget("d-b");
  CHECK(c.cached_events() == 1);
  CHECK(c.tracked_objects() == 1);
  c.forget("");  // no uid: nothing to forget
  c.forget("uid-unknown");
  CHECK(c.cached_events() == 1);
  // b's repeat still patches its Event.
  const auto again = c.observe(config_map("b", "uid-b"), EventType::normal, "Created", "Created b");
  CHECK(again.action == Action::patch);
  CHECK(again.event.name == kept.event.name);
}

TEST_CASE("the Event caches keep a few hundred bytes per object, not the Events", "[events]") {
  // What the operator records per AppService: "Created" for its Deployment and its Service. At
  // N = 1,000 the caches used to hold each Event whole under keys holding the whole text, about
  // 2.5 KiB per AppService; then a copy of the uid and the reason per entry, 760 bytes; they keep
  // 16 bytes of uid, two hashes and counters now.
  constexpr int kObjects = 1000;
  FakeClock clock;
  std::size_t before = 0;
  std::size_t after = 0;
  {
    EventCorrelator c(clock);
    before = heap_in_use();
    for (int i = 0; i < kObjects; ++i) {
      char uid[40];
      std::snprintf(uid, sizeof uid, "5b1c3a2e-0f4d-4c8a-9e7b-%012d", i);
      const ObjectReference app("app.example.com/v1", "AppService", "bench",
                                "app-" + std::to_string(i), uid);
      c.observe(app, EventType::normal, "Created",
                "Created Deployment bench/app-" + std::to_string(i));
      c.observe(app, EventType::normal, "Created",
                "Created Service bench/app-" + std::to_string(i));
    }
    after = heap_in_use();
    REQUIRE(c.cached_events() == 2 * kObjects);
    REQUIRE(c.tracked_objects() == kObjects);
  }
  const std::size_t per_object = (after - before) / kObjects;
  INFO("bytes per object with two Events: " << per_object);
  CHECK(per_object < 480);
}

TEST_CASE("messages are cut to 1024 bytes at a UTF-8 character boundary", "[events]") {
  CHECK(ctrl::truncate_utf8("h\xC3\xA9llo", 2) == "h");  // never half of é
  CHECK(ctrl::truncate_utf8("h\xC3\xA9llo", 3) == "h\xC3\xA9");
  CHECK(ctrl::truncate_utf8("\xE2\x82\xAC\xF0\x9F\x98\x80", 6) == "\xE2\x82\xAC");  // € then 😀
  CHECK(ctrl::truncate_utf8("\xE2\x82\xAC\xF0\x9F\x98\x80", 7) == "\xE2\x82\xAC\xF0\x9F\x98\x80");
  // Invalid bytes become '?', so the JSON we send is valid UTF-8.
  CHECK(ctrl::truncate_utf8("a\xFF"
                            "b\xC3",
                            10) == "a?b?");
  CHECK(ctrl::truncate_utf8("\xC0\xAF", 10) == "??");       // overlong '/'
  CHECK(ctrl::truncate_utf8("\xED\xA0\x80", 10) == "???");  // a surrogate
  CHECK(ctrl::truncate_utf8("", 10).empty());

  FakeClock clock;
  EventCorrelator c(clock);
  const std::string euro = "\xE2\x82\xAC";
  const std::string exact(ctrl::kMaxEventMessageBytes, 'x');
  CHECK(c.observe(config_map(), EventType::normal, "R", exact).event.message == exact);

  // 1022 ASCII bytes then a 3-byte character: it does not fit, so the message stops at 1022.
  const std::string long_message = std::string(1022, 'a') + euro + std::string(100, 'b');
  const auto w = c.observe(config_map(), EventType::normal, "Long", long_message);
  CHECK(w.event.message == std::string(1022, 'a'));
  // Messages that differ only past the limit are repeats of one Event.
  const auto w2 = c.observe(config_map(), EventType::normal, "Long",
                            std::string(1022, 'a') + euro + std::string(5, 'c'));
  CHECK(w2.action == Action::patch);
  CHECK(w2.event.name == w.event.name);
}

TEST_CASE("the created Event has the core/v1 shape kubectl describe looks for", "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  ObjectReference ref("app.example.com/v1", "AppService", "team-a", "web", "1234-abcd");
  ref.resource_version = "42";
  clock.step(1500ms);  // sub-second part is dropped from the timestamps
  const auto w = c.observe(ref, EventType::warning, "InvalidSpec", "spec.image is empty");
  const auto body =
      parse(ctrl::event_create_body(w.event, ctrl::EventSource("appservice-operator", "host-1")));

  CHECK(str(body["apiVersion"]) == "v1");
  CHECK(str(body["kind"]) == "Event");
  CHECK(str(body["metadata"]["namespace"]) == "team-a");
  CHECK(str(body["metadata"]["name"]) == "web." + hex_nanos(clock.wall_now()));
  const auto& io = body["involvedObject"];
  CHECK(str(io["apiVersion"]) == "app.example.com/v1");
  CHECK(str(io["kind"]) == "AppService");
  CHECK(str(io["name"]) == "web");
  CHECK(str(io["namespace"]) == "team-a");
  CHECK(str(io["uid"]) == "1234-abcd");
  CHECK(str(io["resourceVersion"]) == "42");
  CHECK(str(body["reason"]) == "InvalidSpec");
  CHECK(str(body["message"]) == "spec.image is empty");
  CHECK(str(body["type"]) == "Warning");
  CHECK(str(body["source"]["component"]) == "appservice-operator");
  CHECK(str(body["reportingComponent"]) == "appservice-operator");
  CHECK(str(body["reportingInstance"]) == "host-1");
  CHECK(str(body["firstTimestamp"]) == "2024-01-01T00:00:01Z");
  CHECK(str(body["lastTimestamp"]) == "2024-01-01T00:00:01Z");
  CHECK(body["count"].GetInt() == 1);
  CHECK_FALSE(body.HasMember("eventTime"));  // core/v1 style, validated as such by the server
}

TEST_CASE("Events about cluster-scoped objects go to the default namespace", "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  const ObjectReference node("v1", "Node", "", "node-1", "u-n");
  const auto w = c.observe(node, EventType::normal, "Ready", "ok");
  CHECK(w.event.ns == "default");
  const auto body = parse(ctrl::event_create_body(w.event, ctrl::EventSource("c", "i")));
  CHECK(str(body["metadata"]["namespace"]) == "default");
  CHECK_FALSE(body["involvedObject"].HasMember("namespace"));
  CHECK_FALSE(body["involvedObject"].HasMember("resourceVersion"));
}

TEST_CASE("Event names are the object's name, a dot and hex nanoseconds, within 253 bytes",
          "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  const std::string long_name = std::string(240, 'n') + "-x";
  const auto w = c.observe(config_map(long_name), EventType::normal, "R", "m");
  CHECK(w.event.name.size() <= 253);
  CHECK(w.event.name.substr(w.event.name.find('.')) == "." + hex_nanos(clock.wall_now()));

  // A cut that would end in '-' drops it, so the name stays a valid DNS subdomain.
  const std::string dashed = std::string(235, 'n') + "-" + std::string(20, 'z');
  const auto d = c.observe(config_map(dashed, "u2"), EventType::normal, "R", "m");
  CHECK(d.event.name.size() <= 253);
  CHECK(d.event.name.find("-.") == std::string::npos);
}

TEST_CASE("Event timestamps are RFC 3339 seconds in UTC", "[events]") {
  using Wall = ctrl::Clock::WallTime;
  CHECK(ctrl::format_event_time(Wall{}) == "1970-01-01T00:00:00Z");
  CHECK(ctrl::format_event_time(Wall{FakeClock::kDefaultWallStart + 86399s + 999ms}) ==
        "2024-01-01T23:59:59Z");
  CHECK(ctrl::format_event_time(Wall{} - 1ms) == "1969-12-31T23:59:59Z");
}

// ---- The sender, against a fake API server ----

namespace {

struct RecorderFixture {
  asio::io_context io;
  FakeClock clock;
  ctrl::MetricsRegistry metrics;
  FakeApiServer server;
  std::shared_ptr<kube::RestClient> client;

  explicit RecorderFixture(FakeApiServer::Handler h)
      : server(io, std::move(h)), client(kube::testing::rest_client_for(io, server)) {}

  EventRecorder::Options options() const {
    EventRecorder::Options o;
    o.component = "appservice-operator";
    o.instance = "test-host";
    o.retry_delay = 10ms;
    return o;
  }

  // A series of event_recorder_events_total as /metrics shows it (0 when absent).
  double count(const std::string& result) {
    const std::string text = metrics.render();
    const std::string series = "event_recorder_events_total{result=\"" + result + "\"} ";
    const auto at = text.find(series);
    if (at == std::string::npos) return 0;
    return std::stod(text.substr(at + series.size()));
  }

  void run(std::function<awaitable<void>()> body) {
    run_async(io, body(), [this] { server.stop(); });
  }
};

FakeApiServer::Reply created_from(const FakeApiServer::Request& r) {
  return FakeApiServer::Reply::json(201, r.body);
}

FakeApiServer::Reply status(int code, const std::string& reason) {
  return FakeApiServer::Reply::json(code,
                                    R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
                                    R"("reason":")" +
                                        reason + R"(","code":)" + std::to_string(code) + "}");
}

}  // namespace

TEST_CASE("a recorder without sweep_every leaves nothing pending on its io_context", "[events]") {
  // Code that runs an io_context until it runs out of work (tests, one-shot tools) must not
  // wait out a 10-minute timer behind a recorder that outlives its Events.
  RecorderFixture f([](const FakeApiServer::Request& r) { return created_from(r); });
  EventRecorder rec(f.io.get_executor(), f.client, f.options(), f.clock, &f.metrics);
  f.run([&]() -> awaitable<void> {
    rec.record(config_map(), EventType::normal, "Created", "Created a");
    REQUIRE(co_await rec.flush(5s));
  });
  CHECK(f.io.stopped());
  CHECK(rec.cached_events() == 1);
}

TEST_CASE("the recorder sweeps its expired cache entries on a timer", "[events]") {
  RecorderFixture f([](const FakeApiServer::Request& r) { return created_from(r); });
  f.run([&]() -> awaitable<void> {
    auto options = f.options();
    options.correlator.window = 1ms;
    options.sweep_every = 1ms;  // the timer fires 1 s after the first Event
    EventRecorder rec(f.io.get_executor(), f.client, options, f.clock, &f.metrics);
    rec.record(config_map(), EventType::normal, "Created", "Created a");
    REQUIRE(co_await rec.flush(5s));
    REQUIRE(rec.cached_events() == 1);
    f.clock.step(1h);  // the bucket refills too
    asio::steady_timer t(co_await asio::this_coro::executor);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (rec.cached_events() > 0 && std::chrono::steady_clock::now() < deadline) {
      t.expires_after(20ms);
      co_await t.async_wait(asio::use_awaitable);
    }
    CHECK(rec.cached_events() == 0);
  });
}

TEST_CASE("the recorder creates, then patches a repeat with a strategic merge patch", "[events]") {
  RecorderFixture f([](const FakeApiServer::Request& r) {
    if (r.method == http::verb::post) return created_from(r);
    return FakeApiServer::Reply::json(200, "{}");
  });
  f.run([&]() -> awaitable<void> {
    EventRecorder rec(f.io.get_executor(), f.client, f.options(), f.clock, &f.metrics);
    rec.record(config_map(), EventType::warning, "BackOff", "retrying");
    REQUIRE(co_await rec.flush(5s));
    f.clock.step(1min);
    rec.record(config_map(), EventType::warning, "BackOff", "retrying");
    REQUIRE(co_await rec.flush(5s));
    CHECK(rec.pending() == 0);
  });
  REQUIRE(f.server.seen().size() == 2);
  const auto& post = f.server.seen()[0];
  CHECK(post.method == http::verb::post);
  CHECK(post.target == "/api/v1/namespaces/ns/events");
  const auto created = parse(post.body);
  const std::string name = str(created["metadata"]["name"]);
  CHECK(str(created["involvedObject"]["uid"]) == "uid-1");

  const auto& patch = f.server.seen()[1];
  CHECK(patch.method == http::verb::patch);
  CHECK(patch.target == "/api/v1/namespaces/ns/events/" + name);
  CHECK(patch.content_type == "application/strategic-merge-patch+json");
  const auto body = parse(patch.body);
  CHECK(body["count"].GetInt() == 2);
  CHECK(str(body["lastTimestamp"]) == "2024-01-01T00:01:00Z");
  CHECK(f.count("created") == 1);
  CHECK(f.count("patched") == 1);
  CHECK(f.count("failed") == 0);
}

TEST_CASE("a patch of an expired Event creates it again with the count so far", "[events]") {
  RecorderFixture f([](const FakeApiServer::Request& r) {
    if (r.method == http::verb::post) return created_from(r);
    return status(404, "NotFound");
  });
  f.run([&]() -> awaitable<void> {
    EventRecorder rec(f.io.get_executor(), f.client, f.options(), f.clock, &f.metrics);
    rec.record(config_map(), EventType::normal, "Synced", "ok");
    REQUIRE(co_await rec.flush(5s));
    f.clock.step(1s);
    rec.record(config_map(), EventType::normal, "Synced", "ok");
    REQUIRE(co_await rec.flush(5s));
  });
  REQUIRE(f.server.seen().size() == 3);
  CHECK(f.server.seen()[1].method == http::verb::patch);
  const auto& again = f.server.seen()[2];
  CHECK(again.method == http::verb::post);
  const auto first = parse(f.server.seen()[0].body);
  const auto second = parse(again.body);
  CHECK(str(second["metadata"]["name"]) == str(first["metadata"]["name"]));
  CHECK(second["count"].GetInt() == 2);
  CHECK(str(second["firstTimestamp"]) == "2024-01-01T00:00:00Z");
  CHECK(str(second["lastTimestamp"]) == "2024-01-01T00:00:01Z");
  CHECK(f.count("created") == 2);
  CHECK(f.count("failed") == 0);
}

TEST_CASE("transient failures are retried a couple of times, refusals are not", "[events]") {
  int posts = 0;
  RecorderFixture f([&](const FakeApiServer::Request& r) {
    ++posts;
    const auto body = parse(r.body);
    const std::string reason = str(body["reason"]);
    if (reason == "Flaky" && posts < 3) return status(503, "ServiceUnavailable");
    if (reason == "Refused") return status(403, "Forbidden");
    if (reason == "Down") return status(500, "InternalError");
    return created_from(r);
  });
  f.run([&]() -> awaitable<void> {
    EventRecorder rec(f.io.get_executor(), f.client, f.options(), f.clock, &f.metrics);
    rec.record(config_map(), EventType::normal, "Flaky", "m");    // 503, 503, then 201
    rec.record(config_map(), EventType::normal, "Refused", "m");  // 403: one try
    rec.record(config_map(), EventType::normal, "Down", "m");     // 500 three times
    rec.record(config_map(), EventType::normal, "After", "m");    // still sent, in order
    REQUIRE(co_await rec.flush(5s));
  });
  std::vector<std::string> reasons;
  for (const auto& r : f.server.seen()) reasons.push_back(str(parse(r.body)["reason"]));
  CHECK(reasons == std::vector<std::string>{"Flaky", "Flaky", "Flaky", "Refused", "Down", "Down",
                                            "Down", "After"});
  CHECK(f.count("created") == 2);
  CHECK(f.count("failed") == 2);
}

TEST_CASE("repeats queued behind a write become one write with the latest count", "[events]") {
  RecorderFixture f([](const FakeApiServer::Request& r) { return created_from(r); });
  f.run([&]() -> awaitable<void> {
    EventRecorder rec(f.io.get_executor(), f.client, f.options(), f.clock, &f.metrics);
    // All recorded before the sender first runs: the create absorbs the repeats.
    for (int i = 0; i < 5; ++i) {
      rec.record(config_map(), EventType::warning, "BackOff", "retrying");
      f.clock.step(1s);
    }
    CHECK(rec.pending() == 1);
    REQUIRE(co_await rec.flush(5s));
  });
  REQUIRE(f.server.seen().size() == 1);
  const auto body = parse(f.server.seen()[0].body);
  CHECK(body["count"].GetInt() == 5);
  CHECK(str(body["firstTimestamp"]) == "2024-01-01T00:00:00Z");
  CHECK(str(body["lastTimestamp"]) == "2024-01-01T00:00:04Z");
  CHECK(f.count("created") == 1);
  CHECK(f.count("patched") == 4);
}

TEST_CASE("a full queue drops the oldest write, and the rate limit drops storms", "[events]") {
  RecorderFixture f([](const FakeApiServer::Request& r) { return created_from(r); });
  f.run([&]() -> awaitable<void> {
    auto o = f.options();
    o.max_queue = 2;
    EventRecorder rec(f.io.get_executor(), f.client, o, f.clock, &f.metrics);
    rec.record(config_map(), EventType::normal, "One", "m");
    rec.record(config_map(), EventType::normal, "Two", "m");
    rec.record(config_map(), EventType::normal, "Three", "m");
    CHECK(rec.pending() == 2);
    REQUIRE(co_await rec.flush(5s));
    // 3 of the object's 25 tokens are spent; 22 more pass the filter, the rest are dropped.
    for (int i = 0; i < 30; ++i) {
      rec.record(config_map(), EventType::normal, "Storm" + std::to_string(i), "m");
      if (rec.pending() >= 2) REQUIRE(co_await rec.flush(5s));
    }
    REQUIRE(co_await rec.flush(5s));
  });
  std::vector<std::string> reasons;
  for (const auto& r : f.server.seen()) reasons.push_back(str(parse(r.body)["reason"]));
  REQUIRE(reasons.size() == 2 + 22);
  CHECK(reasons[0] == "Two");
  CHECK(reasons[1] == "Three");
  CHECK(f.count("queue_overflow") == 1);
  CHECK(f.count("rate_limited") == 8);
  CHECK(f.count("created") == 24);
}

TEST_CASE("flush gives up at its deadline while the server does not answer", "[events]") {
  RecorderFixture f([](const FakeApiServer::Request&) {
    return FakeApiServer::Reply::of(FakeApiServer::Reply::Kind::hang);
  });
  f.run([&]() -> awaitable<void> {
    EventRecorder rec(f.io.get_executor(), f.client, f.options(), f.clock, &f.metrics);
    rec.record(config_map(), EventType::normal, "Stuck", "m");
    const auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(co_await rec.flush(200ms));
    CHECK(std::chrono::steady_clock::now() - start >= 200ms);
    CHECK(rec.pending() == 1);
  });
}

TEST_CASE("a recorder destroyed with writes queued sends nothing more and leaves nothing dangling",
          "[events]") {
  RecorderFixture f([](const FakeApiServer::Request& r) { return created_from(r); });
  f.run([&]() -> awaitable<void> {
    {
      EventRecorder rec(f.io.get_executor(), f.client, f.options(), f.clock, &f.metrics);
      rec.record(config_map(), EventType::normal, "Lost", "m");
      rec.record(config_map(), EventType::normal, "AlsoLost", "m");
      CHECK(rec.pending() == 2);
    }  // the sender has not run yet; it wakes to a dead recorder
    // The sender's wake-up was posted before ours, so it has run (and returned) after this.
    co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
  });
  CHECK(f.server.seen().empty());
  CHECK(f.count("created") == 0);
}
