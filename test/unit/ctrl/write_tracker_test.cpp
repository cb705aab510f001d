// SPDX-License-Identifier: Apache-2.0
#include "ctrl/write_tracker.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "ctrl/object/object_meta.h"

using namespace ctrl;

namespace {

rapidjson::Document object(const std::string& name, const std::string& rv,
                           const std::string& uid = "uid-1") {
  rapidjson::Document doc;
  doc.Parse((R"({"metadata":{"namespace":"ns","name":")" + name + R"(","uid":")" + uid +
             R"(","resourceVersion":")" + rv + R"("}})")
                .c_str());
  return doc;
}

// A cache: its store and the newest resourceVersion its informer observed.
struct FakeCache {
  ObjectStore store;
  std::string newest;

  void holds(const rapidjson::Document& doc) {
    auto copy = std::make_shared<rapidjson::Document>();
    copy->CopyFrom(doc, copy->GetAllocator());
    store.apply(informer::Upsert{copy});
  }
};

struct Fixture {
  FakeClock clock;
  FakeCache apps;
  FakeCache deployments;
  WriteTracker tracker{clock};
  Fixture() {
    apps.newest = "100";
    deployments.newest = "100";
    tracker.add_cache(apps.store, "apps", [this] { return apps.newest; });
    tracker.add_cache(deployments.store, "deployments", [this] { return deployments.newest; });
  }
};

}  // namespace

TEST_CASE("resourceVersions compare as unsigned integers, anything else is not one",
          "[write_tracker]") {
  CHECK(resource_version_number("0") == 0u);
  CHECK(resource_version_number("42") == 42u);
  CHECK(resource_version_number("18446744073709551615") == UINT64_MAX);
  CHECK_FALSE(resource_version_number("18446744073709551616"));  // overflows
  CHECK_FALSE(resource_version_number(""));
  CHECK_FALSE(resource_version_number("-1"));
  CHECK_FALSE(resource_version_number("+1"));
  CHECK_FALSE(resource_version_number("012"));
  CHECK_FALSE(resource_version_number("12a"));
  CHECK_FALSE(resource_version_number("MTIz"));
}

TEST_CASE("write tracker: a key is behind until its cache observes the write", "[write_tracker]") {
  Fixture f;
  CHECK_FALSE(f.tracker.behind("ns/a"));  // nothing written
  f.tracker.record(f.apps.store, "ns/a", object("a", "105"));
  CHECK(f.tracker.size() == 1);
  auto behind = f.tracker.behind("ns/a");
  REQUIRE(behind);
  CHECK(behind->cache == "apps");
  CHECK(behind->object_key == "ns/a");
  CHECK(behind->written == 105);
  CHECK(behind->observed == "100");
  CHECK_FALSE(f.tracker.behind("ns/b"));  // other keys are not held
  f.apps.newest = "104";
  CHECK(f.tracker.behind("ns/a"));
  // Compared as integers: "1000" is past "105" though it sorts before it as text.
  f.apps.newest = "1000";
  CHECK_FALSE(f.tracker.behind("ns/a"));
  CHECK(f.tracker.size() == 0);  // caught up: the record went
}

TEST_CASE("write tracker: a child's write holds its owner's key until the child's cache has it",
          "[write_tracker]") {
  Fixture f;
  f.tracker.record(f.deployments.store, "ns/owner", object("child", "110"));
  f.tracker.record(f.apps.store, "ns/owner", object("owner", "111"));
  auto behind = f.tracker.behind("ns/owner");
  REQUIRE(behind);
  f.deployments.newest = "110";  // the Deployment's event came
  behind = f.tracker.behind("ns/owner");
  REQUIRE(behind);
  CHECK(behind->cache == "apps");  // still waiting for the owner's own (status) write
  CHECK(f.tracker.size() == 1);
  f.apps.newest = "111";
  CHECK_FALSE(f.tracker.behind("ns/owner"));
  // A later write to the same object replaces the record, an older answer does not.
  f.tracker.record(f.apps.store, "ns/owner", object("owner", "120"));
  f.tracker.record(f.apps.store, "ns/owner", object("owner", "115"));
  CHECK(f.tracker.size() == 1);
  f.apps.newest = "119";
  CHECK(f.tracker.behind("ns/owner"));
  f.apps.newest = "120";
  CHECK_FALSE(f.tracker.behind("ns/owner"));
}

TEST_CASE("write tracker: a deletion, a DELETE write or the owner's deletion drops the record",
          "[write_tracker]") {
  Fixture f;
  f.tracker.record(f.apps.store, "ns/a", object("a", "105"));
  // The deletion reached the cache: its handler drops the record, whatever the newest says.
  StoreChange change;
  change.type = StoreChange::Type::deleted;
  change.old_object = std::make_shared<rapidjson::Document>(object("a", "106"));
  f.tracker.forget_deleted(f.apps.store)(change);
  CHECK(f.tracker.size() == 0);
  CHECK_FALSE(f.tracker.behind("ns/a"));

  // Only a deletion of the uid written: a predecessor's deletion seen late keeps the record.
  f.tracker.record(f.apps.store, "ns/a", object("a", "107", "uid-2"));
  f.tracker.deleted(f.apps.store, object("a", "101", "uid-1"));
  CHECK(f.tracker.size() == 1);
  f.tracker.deleted(f.apps.store, object("a", "108", "uid-2"));
  CHECK(f.tracker.size() == 0);

  f.tracker.record(f.deployments.store, "ns/a", object("a", "109"));
  f.tracker.forget(f.deployments.store, "ns/a");  // we deleted it
  CHECK(f.tracker.size() == 0);

  f.tracker.record(f.deployments.store, "ns/a", object("a", "110"));
  f.tracker.record(f.apps.store, "ns/a", object("a", "111"));
  f.tracker.forget_owner("ns/a");
  CHECK(f.tracker.size() == 0);
  CHECK_FALSE(f.tracker.behind("ns/a"));
  // Nothing left behind in the indexes: a new record works as the first.
  f.tracker.record(f.deployments.store, "ns/a", object("a", "112"));
  CHECK(f.tracker.behind("ns/a"));
}

TEST_CASE("write tracker: a recreated object is not held back by its predecessor's record",
          "[write_tracker]") {
  Fixture f;
  f.tracker.record(f.apps.store, "ns/a", object("a", "105", "uid-old"));
  f.apps.holds(object("a", "99", "uid-old"));  // the cache still holds the one written
  CHECK(f.tracker.behind("ns/a"));
  f.apps.holds(object("a", "98", "uid-new"));  // another object of the name
  CHECK_FALSE(f.tracker.behind("ns/a"));
  CHECK(f.tracker.size() == 0);
  // A write to the successor replaces the predecessor's record even at a lower resourceVersion.
  f.tracker.record(f.apps.store, "ns/a", object("a", "105", "uid-old"));
  f.tracker.record(f.apps.store, "ns/a", object("a", "103", "uid-new"));
  CHECK(f.tracker.size() == 1);
  auto behind = f.tracker.behind("ns/a");
  REQUIRE(behind);
  CHECK(behind->written == 103);
}

TEST_CASE("write tracker: resourceVersions that are not integers fail open", "[write_tracker]") {
  Fixture f;
  f.tracker.record(f.apps.store, "ns/a", object("a", "opaque"));
  CHECK(f.tracker.size() == 0);  // not comparable: not recorded
  CHECK_FALSE(f.tracker.behind("ns/a"));
  f.tracker.record(f.apps.store, "ns/a", object("a", "105"));
  f.apps.newest = "not-a-number";
  CHECK_FALSE(f.tracker.behind("ns/a"));
  f.tracker.record(f.apps.store, "ns/b", object("b", "105"));
  f.apps.newest = "";  // nothing observed
  CHECK_FALSE(f.tracker.behind("ns/b"));
  // A write without a resourceVersion (a Status answer), or to a cache nobody added: nothing.
  rapidjson::Document status;
  status.Parse(R"({"kind":"Status","status":"Success"})");
  f.tracker.record(f.apps.store, "ns/c", status);
  ObjectStore unknown;
  f.tracker.record(unknown, "ns/c", object("c", "200"));
  CHECK(f.tracker.size() == 0);
}

TEST_CASE("write tracker: a cache that never observes the write holds its key 30 s at most",
          "[write_tracker]") {
  Fixture f;
  f.tracker.record(f.apps.store, "ns/a", object("a", "105"));
  f.clock.step(std::chrono::seconds(29));
  CHECK(f.tracker.behind("ns/a"));  // still waiting: no bookmark, no event yet
  f.tracker.record(f.apps.store, "ns/a", object("a", "106"));  // a newer write starts it again
  f.clock.step(std::chrono::seconds(29));
  CHECK(f.tracker.behind("ns/a"));
  f.clock.step(std::chrono::seconds(2));
  CHECK_FALSE(f.tracker.behind("ns/a"));  // fail open
  CHECK(f.tracker.size() == 0);
}

namespace {

// The object a PATCH that removed its last finalizer returns: being deleted, no finalizers, and
// the resourceVersion of the update that set deletionTimestamp (the one the cache already holds).
rapidjson::Document finalized(const std::string& name, const std::string& rv) {
  rapidjson::Document doc;
  doc.Parse((R"({"metadata":{"namespace":"ns","name":")" + name +
             R"(","uid":"uid-1","resourceVersion":")" + rv +
             R"(","deletionTimestamp":"2026-12-07T10:00:00Z","finalizers":[]}})")
                .c_str());
  return doc;
}

}  // namespace

TEST_CASE("write tracker: a write that ends in deletion holds its key until the object is gone",
          "[write_tracker]") {
  Fixture f;
  // The watch brought MODIFIED at rv 120 (deletionTimestamp set, our finalizer still on it).
  f.apps.holds(object("a", "120"));
  f.apps.newest = "120";
  // Our PATCH removed the last finalizer: the server deletes the object and answers rv 120.
  f.tracker.record(f.apps.store, "ns/a", finalized("a", "120"));
  auto behind = f.tracker.behind("ns/a");
  REQUIRE(behind);  // the cache still shows the finalizer: a reconcile now would clean up again
  CHECK(behind->written == 120);
  f.apps.newest = "121";  // another object's event: still the same object in the cache
  CHECK(f.tracker.behind("ns/a"));
  // DELETED at rv 122 reaches the cache: the object leaves it.
  f.apps.store.apply(informer::Delete{std::make_shared<rapidjson::Document>(object("a", "122"))});
  CHECK_FALSE(f.tracker.behind("ns/a"));
  CHECK(f.tracker.size() == 0);

  // A successor of that name (another uid) does not wait for the predecessor's deletion.
  f.tracker.record(f.apps.store, "ns/b", finalized("b", "130"));
  f.apps.holds(object("b", "131", "uid-2"));
  CHECK_FALSE(f.tracker.behind("ns/b"));
  // A Pod whose grace period still runs is not deleted by the write (its kubelet confirms): an
  // ordinary record, caught up at the resourceVersion written.
  rapidjson::Document graceful = finalized("p", "135");
  graceful["metadata"].AddMember("deletionGracePeriodSeconds", 30, graceful.GetAllocator());
  f.apps.holds(graceful);
  f.apps.newest = "135";
  f.tracker.record(f.apps.store, "ns/p", graceful);
  CHECK_FALSE(f.tracker.behind("ns/p"));
  // Nor does a cache that never hears of it hold the key for good.
  f.apps.holds(object("c", "140"));
  f.tracker.record(f.apps.store, "ns/c", finalized("c", "140"));
  f.clock.step(std::chrono::seconds(31));
  CHECK_FALSE(f.tracker.behind("ns/c"));
}

TEST_CASE("write tracker: every key that wrote a shared object waits for its own write",
          "[write_tracker]") {
  Fixture f;
  // Three keys add their entries to one registry object, one write each.
  f.tracker.record(f.apps.store, "ns/one", object("registry", "201"));
  f.tracker.record(f.apps.store, "ns/two", object("registry", "202"));
  f.tracker.record(f.apps.store, "ns/three", object("registry", "203"));
  CHECK(f.tracker.size() == 3);
  f.apps.newest = "201";
  CHECK_FALSE(f.tracker.behind("ns/one"));
  auto two = f.tracker.behind("ns/two");
  REQUIRE(two);  // its own write (202) is not in the cache yet, though the first is
  CHECK(two->written == 202);
  CHECK(f.tracker.behind("ns/three"));
  f.apps.newest = "202";
  CHECK_FALSE(f.tracker.behind("ns/two"));
  CHECK(f.tracker.behind("ns/three"));
  // The registry's deletion drops every key's record of it.
  f.tracker.deleted(f.apps.store, object("registry", "204"));
  CHECK(f.tracker.size() == 0);
  CHECK_FALSE(f.tracker.behind("ns/three"));
  // One key's owner gone: only its own record goes.
  f.tracker.record(f.apps.store, "ns/one", object("registry", "301"));
  f.tracker.record(f.apps.store, "ns/two", object("registry", "302"));
  f.tracker.forget_owner("ns/one");
  CHECK(f.tracker.size() == 1);
  CHECK(f.tracker.behind("ns/two"));
}
