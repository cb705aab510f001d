// SPDX-License-Identifier: Apache-2.0
#include "ctrl/cache/informer_state.h"

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
  // Served from the watch cache, like client-go's reflector's first list.
  CHECK(std::get<DoList>(r.next).resource_version == "0");
  CHECK(std::get<DoList>(r.next).paginate);
  CHECK(r.ops.empty());
  CHECK_FALSE(r.state.synced);
  CHECK_FALSE(is_current(r.state));
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

TEST_CASE("informer: an expired continue token falls back to one unpaginated list", "[informer]") {
  auto r = step({}, Start{});
  r = step(std::move(r.state), ListPage{{make_object("ns", "a", "1")}, "tok1", "9"});
  r = step(std::move(r.state), ListFailed{error_of(kube::Errc::gone)});
  CHECK(r.state.phase == Phase::listing);
  CHECK(r.state.pending.empty());
  REQUIRE(std::holds_alternative<DoList>(r.next));
  const auto& full = std::get<DoList>(r.next);
  CHECK(full.continue_token.empty());
  CHECK_FALSE(full.paginate);  // client-go's pager: FullListIfExpired
  CHECK(full.resource_version == "0");

  // The full list completes the sync, and later lists paginate again.
  auto done = step(r.state, ListPage{{make_object("ns", "b", "2")}, "", "12"});
  REQUIRE(done.ops.size() == 1);
  CHECK(std::get<Replace>(done.ops[0]).items.size() == 1);  // the earlier page is not kept
  CHECK(done.state.synced);
  CHECK_FALSE(done.state.full_list);

  // If even the full list says 410, there is no loop: back off, then a quorum list.
  auto again = step(std::move(r.state), ListFailed{error_of(kube::Errc::gone)});
  CHECK(again.state.phase == Phase::backing_off);
  REQUIRE(std::holds_alternative<DoBackoff>(again.next));
  again = step(std::move(again.state), BackoffDone{});
  REQUIRE(std::holds_alternative<DoList>(again.next));
  CHECK(std::get<DoList>(again.next).resource_version.empty());
  CHECK(std::get<DoList>(again.next).paginate);
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

TEST_CASE("informer: a list over the response cap backs off, then lists from etcd in pages",
          "[informer]") {
  auto r = step({}, Start{});
  REQUIRE(std::get<DoList>(r.next).resource_version == "0");  // the watch cache: one response
  r = step(std::move(r.state), ListFailed{error_of(kube::Errc::response_too_large)});
  CHECK(r.state.phase == Phase::backing_off);
  REQUIRE(std::holds_alternative<DoBackoff>(r.next));
  CHECK(std::get<DoBackoff>(r.next).why.find("test") != std::string::npos);
  r = step(std::move(r.state), BackoffDone{});
  REQUIRE(std::holds_alternative<DoList>(r.next));
  CHECK(std::get<DoList>(r.next).resource_version.empty());  // etcd honours the limit
  CHECK(std::get<DoList>(r.next).paginate);
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

TEST_CASE("informer: 410 from the watch relists after the backoff, an ERROR event 410 too",
          "[informer]") {
  kube::WatchEvent ev;
  ev.type = kube::WatchEvent::Type::error;
  ev.object = std::make_shared<rapidjson::Document>();
  ev.error = error_of(kube::Errc::gone);
  for (Input gone : {Input{WatchFailed{error_of(kube::Errc::gone)}}, Input{Event{ev}}}) {
    auto s = watching_state();
    CHECK(is_current(s));
    auto r = step(std::move(s), std::move(gone));
    CHECK(r.ops.empty());
    // Not at once: the reflector's backoff comes first, so a server answering every watch with
    // 410 cannot make us list in a loop.
    CHECK(r.state.phase == Phase::backing_off);
    REQUIRE(std::holds_alternative<DoBackoff>(r.next));
    CHECK_FALSE(is_current(r.state));  // /readyz is false until the relist is in
    CHECK(r.state.synced);             // though the cache stays readable
    r = step(std::move(r.state), BackoffDone{});
    CHECK(r.state.phase == Phase::listing);
    REQUIRE(std::holds_alternative<DoList>(r.next));
    // The RV we had is too old for the server: a quorum read, never "0" (could go back in time).
    CHECK(std::get<DoList>(r.next).resource_version.empty());
    CHECK_FALSE(is_current(r.state));
    r = step(std::move(r.state), ListPage{{}, "", "50"});
    CHECK(is_current(r.state));
    CHECK(std::get<DoWatch>(r.next).resource_version == "50");
  }
}

TEST_CASE("informer: is current while listed, watching or waiting to re-watch", "[informer]") {
  auto s = step({}, Start{}).state;
  CHECK_FALSE(is_current(s));
  s = step(std::move(s), ListPage{{}, "", "3"}).state;
  CHECK(is_current(s));  // listed
  s = step(std::move(s), WatchOpened{}).state;
  CHECK(is_current(s));
  // A broken connection resumes the watch from the RV: the cache is still complete.
  s = step(std::move(s), WatchFailed{error_of(kube::Errc::unavailable)}).state;
  CHECK(s.phase == Phase::backing_off);
  CHECK(is_current(s));
  // A list that fails before the first sync: not current, and the retry still asks for "0".
  auto r = step({}, Start{});
  r = step(std::move(r.state), ListFailed{error_of(kube::Errc::forbidden)});
  CHECK_FALSE(is_current(r.state));
  r = step(std::move(r.state), BackoffDone{});
  CHECK(std::get<DoList>(r.next).resource_version == "0");
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

// Streaming lists (WatchList): sendInitialEvents, the initial-events-end bookmark, and the
// fallback to a list when the server does not serve them.
namespace {

kube::WatchEvent end_bookmark(const std::string& rv, bool annotated = true) {
  auto doc = std::make_shared<rapidjson::Document>();
  doc->Parse(R"({"metadata":{"resourceVersion":")" + rv + "\"}}");
  kube::WatchEvent ev;
  ev.type = kube::WatchEvent::Type::bookmark;
  ev.resource_version = rv;
  ev.object = doc;
  ev.initial_events_end = annotated;
  return ev;
}

State streaming_state() {
  State s;
  s.stream_lists = true;
  auto r = step(std::move(s), Start{});
  return step(std::move(r.state), WatchOpened{}).state;
}

bool streams(const Action& next) {
  return std::holds_alternative<DoWatch>(next) && std::get<DoWatch>(next).send_initial_events &&
         std::get<DoWatch>(next).resource_version.empty();
}

}  // namespace

TEST_CASE("informer streaming: start opens a watch with initial events, a consistent snapshot",
          "[informer]") {
  State s;
  s.stream_lists = true;
  auto r = step(std::move(s), Start{});
  CHECK(r.state.phase == Phase::streaming);
  CHECK(streams(r.next));
  CHECK(r.ops.empty());
  CHECK(r.staging == Staging::drop);  // an empty staging store to begin with
  CHECK_FALSE(is_current(r.state));
  r = step(std::move(r.state), WatchOpened{});
  CHECK(r.state.phase == Phase::streaming);
  CHECK(std::holds_alternative<KeepReading>(r.next));
}

TEST_CASE("informer streaming: initial events go to the staging store until the end bookmark",
          "[informer]") {
  auto r = step(streaming_state(),
                Event{watch_event(kube::WatchEvent::Type::added, make_object("ns", "a", "5"))});
  CHECK(r.ops.empty());  // nothing reaches the cache before the list is complete
  REQUIRE(r.staged.size() == 1);
  CHECK(std::holds_alternative<Upsert>(r.staged[0]));
  CHECK(r.staging == Staging::keep);
  r = step(std::move(r.state),
           Event{watch_event(kube::WatchEvent::Type::added, make_object("ns", "b", "7"))});
  r = step(std::move(r.state),
           Event{watch_event(kube::WatchEvent::Type::deleted, make_object("ns", "c", "8"))});
  CHECK(r.ops.empty());
  REQUIRE(r.staged.size() == 1);
  CHECK(std::holds_alternative<Delete>(r.staged[0]));
  CHECK_FALSE(is_current(r.state));
  CHECK(r.state.pending.empty());  // the objects are the driver's staging store's, not State's
  r = step(std::move(r.state), Event{end_bookmark("9")});
  CHECK(r.ops.empty());
  CHECK(r.staged.empty());
  CHECK(r.staging == Staging::commit);  // swapped in as a complete list
  // The same stream goes on as the watch, from the bookmark's resourceVersion.
  CHECK(r.state.phase == Phase::watching);
  CHECK(r.state.resource_version == "9");
  CHECK(r.state.synced);
  CHECK(is_current(r.state));
  CHECK(std::holds_alternative<KeepReading>(r.next));
  r = step(std::move(r.state),
           Event{watch_event(kube::WatchEvent::Type::modified, make_object("ns", "a", "10"))});
  REQUIRE(r.ops.size() == 1);
  CHECK(std::holds_alternative<Upsert>(r.ops[0]));
  CHECK(r.state.resource_version == "10");
}

TEST_CASE("informer streaming: a refused stream falls back to a paginated list at once",
          "[informer]") {
  // The API server with WatchList off answers 422 (sendInitialEvents forbidden); an older one
  // 400. client-go lists instead, for this relist.
  for (auto code : {kube::Errc::invalid, kube::Errc::bad_request, kube::Errc::forbidden}) {
    auto r = step(streaming_state(), WatchFailed{error_of(code)});
    CHECK(r.state.phase == Phase::listing);
    CHECK_FALSE(r.fell_back.empty());  // the driver logs why
    CHECK(r.staging == Staging::drop);
    REQUIRE(std::holds_alternative<DoList>(r.next));
    CHECK(std::get<DoList>(r.next).paginate);
    r = step(std::move(r.state), ListPage{{make_object("ns", "a", "5")}, "", "10"});
    REQUIRE(r.ops.size() == 1);
    CHECK(std::holds_alternative<Replace>(r.ops[0]));
    REQUIRE(std::holds_alternative<DoWatch>(r.next));
    CHECK_FALSE(std::get<DoWatch>(r.next).send_initial_events);
    CHECK(std::get<DoWatch>(r.next).resource_version == "10");
    CHECK(r.state.stream_lists);  // the next relist tries streaming again, as client-go does
  }
}

TEST_CASE("informer streaming: a server that ignores sendInitialEvents is detected", "[informer]") {
  SECTION("a bookmark without the annotation before the initial events ended") {
    auto r = step(streaming_state(),
                  Event{watch_event(kube::WatchEvent::Type::added, make_object("ns", "a", "5"))});
    r = step(std::move(r.state), Event{end_bookmark("9", false)});
    CHECK(r.ops.empty());
    CHECK(r.state.phase == Phase::listing);
    CHECK(r.staging == Staging::drop);  // what was gathered is not a list
    CHECK(std::holds_alternative<DoList>(r.next));
  }
  SECTION("a watch closed at once with nothing") {
    auto r = step(streaming_state(), WatchEnded{std::chrono::milliseconds(20), 0});
    CHECK(r.state.phase == Phase::listing);
    CHECK(std::holds_alternative<DoList>(r.next));
  }
}

TEST_CASE("informer streaming: failures a list would share back off and stream again",
          "[informer]") {
  SECTION("503 on open") {
    auto r = step(streaming_state(), WatchFailed{error_of(kube::Errc::unavailable)});
    CHECK(r.state.phase == Phase::backing_off);
    CHECK(r.staging == Staging::drop);
    REQUIRE(std::holds_alternative<DoBackoff>(r.next));
    r = step(std::move(r.state), BackoffDone{});
    CHECK(streams(r.next));
  }
  SECTION("the stream ends after some events, before the end bookmark") {
    auto r = step(streaming_state(),
                  Event{watch_event(kube::WatchEvent::Type::added, make_object("ns", "a", "5"))});
    r = step(std::move(r.state), WatchEnded{std::chrono::milliseconds(5000), 1});
    CHECK(r.state.phase == Phase::backing_off);
    CHECK(r.staging == Staging::drop);  // a half-streamed list never reaches the cache
    CHECK(r.ops.empty());
    r = step(std::move(r.state), BackoffDone{});
    CHECK(streams(r.next));
  }
  SECTION("an ERROR 410 event") {
    auto r = step(streaming_state(), WatchFailed{error_of(kube::Errc::gone)});
    CHECK(r.state.phase == Phase::backing_off);
    CHECK(r.state.list_resource_version.empty());
    r = step(std::move(r.state), BackoffDone{});
    CHECK(streams(r.next));
  }
}

TEST_CASE(
    "informer streaming: a 410 while watching relists by streaming, the cache stays until "
    "the new list is complete",
    "[informer]") {
  auto r = step(streaming_state(),
                Event{watch_event(kube::WatchEvent::Type::added, make_object("ns", "a", "5"))});
  r = step(std::move(r.state), Event{end_bookmark("9")});
  REQUIRE(is_current(r.state));
  CHECK(r.staging == Staging::commit);
  r = step(std::move(r.state), WatchFailed{error_of(kube::Errc::gone)});
  CHECK_FALSE(is_current(r.state));
  r = step(std::move(r.state), BackoffDone{});
  CHECK(streams(r.next));
  CHECK(r.ops.empty());
  r = step(std::move(r.state), WatchOpened{});
  r = step(std::move(r.state),
           Event{watch_event(kube::WatchEvent::Type::added, make_object("ns", "b", "11"))});
  CHECK(r.ops.empty());
  CHECK_FALSE(is_current(r.state));
  CHECK(r.staged.size() == 1);
  r = step(std::move(r.state), Event{end_bookmark("12")});
  CHECK(r.staging == Staging::commit);
  CHECK(is_current(r.state));
}

TEST_CASE("informer: the newest resourceVersion observed: list, events, bookmarks, never back",
          "[informer][write_tracker]") {
  auto r = step({}, Start{});
  CHECK(r.state.newest_resource_version.empty());  // nothing observed before the first list
  r = step(std::move(r.state), ListPage{{make_object("ns", "a", "5")}, "tok", "9"});
  CHECK(r.state.newest_resource_version.empty());  // a page is not in the cache yet
  r = step(std::move(r.state), ListPage{{make_object("ns", "b", "7")}, "", "10"});
  CHECK(r.state.newest_resource_version == "10");  // the list's, not its newest item's
  r = step(std::move(r.state), WatchOpened{});
  r = step(std::move(r.state),
           Event{watch_event(kube::WatchEvent::Type::modified, make_object("ns", "a", "11"))});
  CHECK(r.state.newest_resource_version == "11");
  r = step(std::move(r.state),
           Event{watch_event(kube::WatchEvent::Type::deleted, make_object("ns", "a", "12"))});
  CHECK(r.state.newest_resource_version == "12");
  // A bookmark moves it with no object: the informer has seen everything up to it.
  r = step(std::move(r.state),
           Event{watch_event(kube::WatchEvent::Type::bookmark, make_object("", "", "30"))});
  CHECK(r.state.newest_resource_version == "30");
  // Compared as integers ("100" > "30" though not as text) and never moved back: a relist after
  // a backoff may answer from an older watch cache than the stream was at.
  r = step(std::move(r.state),
           Event{watch_event(kube::WatchEvent::Type::bookmark, make_object("", "", "100"))});
  CHECK(r.state.newest_resource_version == "100");
  kube::ApiError broken;
  broken.code = kube::Errc::gone;
  r = step(std::move(r.state), WatchFailed{broken});
  r = step(std::move(r.state), BackoffDone{});
  r = step(std::move(r.state), ListPage{{make_object("ns", "b", "7")}, "", "90"});
  CHECK(r.state.resource_version == "90");  // the watch restarts where the list is
  CHECK(r.state.newest_resource_version == "100");
}

TEST_CASE("informer streaming: the newest resourceVersion moves at the initial-events-end bookmark",
          "[informer][write_tracker]") {
  auto r = step(streaming_state(),
                Event{watch_event(kube::WatchEvent::Type::added, make_object("ns", "a", "5"))});
  // Staged objects are not in the cache yet: nothing observed.
  CHECK(r.state.newest_resource_version.empty());
  r = step(std::move(r.state), Event{end_bookmark("9")});
  CHECK(r.state.newest_resource_version == "9");
  r = step(std::move(r.state),
           Event{watch_event(kube::WatchEvent::Type::added, make_object("ns", "b", "14"))});
  CHECK(r.state.newest_resource_version == "14");
}

TEST_CASE("informer: a resourceVersion that is not an integer is kept as it came",
          "[informer][write_tracker]") {
  State s;
  observe_resource_version(s, "12");
  observe_resource_version(s, "");  // nothing: kept
  CHECK(s.newest_resource_version == "12");
  observe_resource_version(s, "opaque-rv");
  CHECK(s.newest_resource_version == "opaque-rv");  // the latest wins; readers fail open
  observe_resource_version(s, "5");
  CHECK(s.newest_resource_version == "5");
  observe_resource_version(s, "4");
  CHECK(s.newest_resource_version == "5");
}
