#include "ctrl/object_store.h"

#include <catch2/catch.hpp>

#include "ctrl/object_meta.h"
#include "informer_test_support.h"

using namespace ctrl;
using ctrl::testing::make_object;

TEST_CASE("store: replace swaps content and reports the difference", "[store]") {
  ObjectStore store;
  CHECK_FALSE(store.has_synced());
  auto changes =
      store.apply(informer::Replace{{make_object("a", "x", "1"), make_object("b", "y", "2")}});
  CHECK(store.has_synced());
  CHECK(changes.size() == 2);
  CHECK(store.size() == 2);
  CHECK(store.get("a/x"));
  CHECK(store.list_namespace("b").size() == 1);

  // Relist: y unchanged (not reported), x updated, z new, and x... y gone? no: x gone.
  changes =
      store.apply(informer::Replace{{make_object("b", "y", "2"), make_object("c", "z", "3")}});
  REQUIRE(changes.size() == 2);
  int added = 0, deleted = 0;
  for (const auto& c : changes) {
    if (c.type == StoreChange::Type::added) {
      ++added;
      CHECK(object_key(*c.new_object) == "c/z");
    }
    if (c.type == StoreChange::Type::deleted) {
      ++deleted;
      CHECK(object_key(*c.old_object) == "a/x");  // a delete missed while disconnected
    }
  }
  CHECK(added == 1);
  CHECK(deleted == 1);
  CHECK_FALSE(store.get("a/x"));
}

TEST_CASE("store: upsert skips an unchanged resourceVersion", "[store]") {
  ObjectStore store;
  CHECK(store.apply(informer::Upsert{make_object("a", "x", "1")}).size() == 1);
  CHECK(store.apply(informer::Upsert{make_object("a", "x", "1")}).empty());
  auto changes = store.apply(informer::Upsert{make_object("a", "x", "2")});
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].type == StoreChange::Type::updated);
  CHECK(meta_resource_version(*changes[0].old_object) == "1");
  CHECK(meta_resource_version(*store.get("a/x")) == "2");
}

TEST_CASE("store: owner index follows updates and deletes", "[store]") {
  ObjectStore store;
  store.apply(informer::Upsert{make_object("a", "x", "1", "owner-1")});
  store.apply(informer::Upsert{make_object("a", "y", "1", "owner-1")});
  store.apply(informer::Upsert{make_object("a", "z", "1")});
  CHECK(store.by_controller_uid("owner-1").size() == 2);
  CHECK(store.by_controller_uid("other").empty());  // not a controller reference
  store.apply(informer::Upsert{make_object("a", "x", "2", "owner-2")});
  CHECK(store.by_controller_uid("owner-1").size() == 1);
  CHECK(store.by_controller_uid("owner-2").size() == 1);
  auto changes = store.apply(informer::Delete{make_object("a", "y", "3", "owner-1")});
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].type == StoreChange::Type::deleted);
  CHECK(store.by_controller_uid("owner-1").empty());
}

TEST_CASE("object meta: keys, owners and managedFields", "[store]") {
  auto obj = make_object("ns", "n", "7", "u1");
  CHECK(object_key(*obj) == "ns/n");
  CHECK(object_key("", "cluster-thing") == "cluster-thing");
  auto owner = controller_owner(*obj);
  REQUIRE(owner);
  CHECK(owner->uid == "u1");
  CHECK(owner->kind == "AppService");

  rapidjson::Document doc;
  doc.Parse(R"({"metadata":{"name":"a","managedFields":[{"manager":"kubectl"}]},"spec":{}})");
  strip_managed_fields(doc);
  CHECK_FALSE(doc["metadata"].HasMember("managedFields"));
  CHECK(doc["metadata"]["name"] == "a");

  rapidjson::Document junk;
  junk.Parse(R"({"metadata":"not an object"})");
  CHECK(object_key(junk).empty());
  CHECK_FALSE(controller_owner(junk));
  strip_managed_fields(junk);  // no crash on malformed input
}
