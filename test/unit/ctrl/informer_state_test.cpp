#include "ctrl/informer_state.h"

#include <catch2/catch.hpp>

#include "informer_test_support.h"

using namespace ctrl;
using namespace ctrl::informer;
using ctrl::testing::make_object;

namespace {

kube::ApiError error_of(kube::Errc code, std::optional<std::chrono::seconds> retry_after = {}) {
  kube::ApiError e;
  e.code = code;
  e.message = "test";
  e.retry_after = retry_after;
  return e;
}

kube::WatchEvent watch_event(kube::WatchEvent::Type type, ObjectPtr object) {
  kube::WatchEvent ev;
  ev.type = type;
  ev.resource_version = std::string(object->operator[]("metadata")["resourceVersion"].GetString());
  ev.object = std::const_pointer_cast<rapidjson::Document>(object);
  return ev;
}

// Started, listed in one page at rv "10", watch open.
State watching_state() {
  auto s = step({}, Start{}).state;
  s = step(std::move(s), ListPage{{make_object("ns", "a", "5")}, "", "10"}).state;
  return step(std::move(s), WatchOpened{}).state;
}

}  // namespace

TEST_CASE("informer: start lists the first page", "[informer]") {
  auto r = step({}, Start{});
  CHECK(r.state.phase == Phase::listing);
  REQUIRE(std::holds_alternative<DoList>(r.next));
  CHECK(std::get<DoList>(r.next).continue_token.empty());
  CHECK(r.ops.empty());
  CHECK_FALSE(r.state.synced);
}

TEST_CASE("informer: pages accumulate and are swapped in at once", "[informer]") {
  auto r = step({}, Start{});
  r = step(std::move(r.state), ListPage{{make_object("ns", "a", "1")}, "tok1", "9"});
  CHECK(r.ops.empty());  // nothing reaches the cache before the last page
  REQUIRE(std::holds_alternative<DoList>(r.next));
  CHECK(std::get<DoList>(r.next).continue_token == "tok1");
  r = step(std::move(r.state),
           ListPage{{make_object("ns", "b", "2"), make_object("ns", "c", "3")}, "", "12"});
  REQUIRE(r.ops.size() == 1);
  REQUIRE(std::holds_alternative<Replace>(r.ops[0]));
  CHECK(std::get<Replace>(r.ops[0]).items.size() == 3);
  CHECK(r.state.phase == Phase::listed);
  CHECK(r.state.synced);
  CHECK(r.state.pending.empty());
  REQUIRE(std::holds_alternative<DoWatch>(r.next));
  CHECK(std::get<DoWatch>(r.next).resource_version == "12");
}

TEST_CASE("informer: an expired continue token restarts the list at once", "[informer]") {
  auto r = step({}, Start{});
  r = step(std::move(r.state), ListPage{{make_object("ns", "a", "1")}, "tok1", "9"});
  r = step(std::move(r.state), ListFailed{error_of(kube::Errc::gone)});
  CHECK(r.state.phase == Phase::listing);
  CHECK(r.state.pending.empty());
  REQUIRE(std::holds_alternative<DoList>(r.next));
  CHECK(std::get<DoList>(r.next).continue_token.empty());
}

TEST_CASE("informer: other list failures back off, then relist", "[informer]") {
  auto r = step({}, Start{});
  r = step(std::move(r.state), ListFailed{error_of(kube::Errc::unavailable)});
  CHECK(r.state.phase == Phase::backing_off);
  REQUIRE(std::holds_alternative<DoBackoff>(r.next));
  CHECK_FALSE(std::get<DoBackoff>(r.next).at_least);
  r = step(std::move(r.state), BackoffDone{});
  CHECK(r.state.phase == Phase::listing);
  CHECK(std::holds_alternative<DoList>(r.next));
}

TEST_CASE("informer: 429 carries Retry-After into the backoff", "[informer]") {
  auto r = step({}, Start{});
  r = step(std::move(r.state),
           ListFailed{error_of(kube::Errc::too_many_requests, std::chrono::seconds(7))});
  REQUIRE(std::holds_alternative<DoBackoff>(r.next));
  CHECK(std::get<DoBackoff>(r.next).at_least == std::chrono::seconds(7));
}

TEST_CASE("informer: watch events become cache operations and advance the RV", "[informer]") {
  auto s = watching_state();
  CHECK(s.phase == Phase::watching);
  auto r = step(std::move(s),
                Event{watch_event(kube::WatchEvent::Type::added, make_object("ns", "b", "11"))});
  REQUIRE(r.ops.size() == 1);
  CHECK(std::holds_alternative<Upsert>(r.ops[0]));
  CHECK(r.state.resource_version == "11");
  CHECK(std::holds_alternative<KeepReading>(r.next));
  r = step(std::move(r.state),
           Event{watch_event(kube::WatchEvent::Type::modified, make_object("ns", "b", "12"))});
  CHECK(std::holds_alternative<Upsert>(r.ops.at(0)));
  r = step(std::move(r.state),
           Event{watch_event(kube::WatchEvent::Type::deleted, make_object("ns", "b", "13"))});
  CHECK(std::holds_alternative<Delete>(r.ops.at(0)));
  CHECK(r.state.resource_version == "13");
}

TEST_CASE("informer: a bookmark only advances the RV", "[informer]") {
  auto r = step(watching_state(),
                Event{watch_event(kube::WatchEvent::Type::bookmark, make_object("", "", "40"))});
  CHECK(r.ops.empty());
  CHECK(r.state.resource_version == "40");
  CHECK(std::holds_alternative<KeepReading>(r.next));
}

TEST_CASE("informer: a clean end re-watches from the last RV", "[informer]") {
  auto r = step(watching_state(),
                Event{watch_event(kube::WatchEvent::Type::added, make_object("ns", "b", "15"))});
  r = step(std::move(r.state), WatchEnded{std::chrono::minutes(5), 1});
  CHECK(r.state.phase == Phase::listed);
  REQUIRE(std::holds_alternative<DoWatch>(r.next));
  CHECK(std::get<DoWatch>(r.next).resource_version == "15");
}

TEST_CASE("informer: a watch that ends at once with no events is a failure", "[informer]") {
  auto r = step(watching_state(), WatchEnded{std::chrono::milliseconds(200), 0});
  CHECK(r.state.phase == Phase::backing_off);
  REQUIRE(std::holds_alternative<DoBackoff>(r.next));
  r = step(std::move(r.state), BackoffDone{});
  REQUIRE(std::holds_alternative<DoWatch>(r.next));  // continues, no relist
  CHECK(std::get<DoWatch>(r.next).resource_version == "10");
  // A short watch that did deliver events is healthy.
  auto ok = step(watching_state(), WatchEnded{std::chrono::milliseconds(200), 3});
  CHECK(std::holds_alternative<DoWatch>(ok.next));
}

TEST_CASE("informer: 410 from the watch relists, an ERROR event 410 too", "[informer]") {
  auto r = step(watching_state(), WatchFailed{error_of(kube::Errc::gone)});
  CHECK(r.state.phase == Phase::listing);
  CHECK(std::holds_alternative<DoList>(r.next));

  kube::WatchEvent ev;
  ev.type = kube::WatchEvent::Type::error;
  ev.object = std::make_shared<rapidjson::Document>();
  ev.error = error_of(kube::Errc::gone);
  r = step(watching_state(), Event{ev});
  CHECK(r.state.phase == Phase::listing);
  CHECK(std::holds_alternative<DoList>(r.next));
  CHECK(r.ops.empty());
}

TEST_CASE("informer: watch connection failures back off and resume from the RV", "[informer]") {
  for (auto code : {kube::Errc::unavailable, kube::Errc::timeout, kube::Errc::internal}) {
    auto r = step(watching_state(), WatchFailed{error_of(code)});
    CHECK(r.state.phase == Phase::backing_off);
    CHECK(std::holds_alternative<DoBackoff>(r.next));
    r = step(std::move(r.state), BackoffDone{});
    REQUIRE(std::holds_alternative<DoWatch>(r.next));
    CHECK(std::get<DoWatch>(r.next).resource_version == "10");
    CHECK(r.state.synced);  // the cache stays usable while reconnecting
  }
  // A watch that cannot even be opened (listed phase) behaves the same.
  auto s = step({}, Start{}).state;
  s = step(std::move(s), ListPage{{}, "", "3"}).state;
  auto r = step(std::move(s),
                WatchFailed{error_of(kube::Errc::too_many_requests, std::chrono::seconds(2))});
  REQUIRE(std::holds_alternative<DoBackoff>(r.next));
  CHECK(std::get<DoBackoff>(r.next).at_least == std::chrono::seconds(2));
}
