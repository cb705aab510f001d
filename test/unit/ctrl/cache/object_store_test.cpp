// SPDX-License-Identifier: Apache-2.0
#include "ctrl/cache/object_store.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ctrl/cache/text_codec.h"
#include "ctrl/object/compact_object.h"
#include "ctrl/object/object_meta.h"
#include "informer_test_support.h"
#include "support/heap_in_use.h"

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
  CHECK(store.contains("b/y"));

  // Relist: y unchanged (not reported), z new, x gone.
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

TEST_CASE("store: only the first list's adds are marked as from the initial list", "[store]") {
  ObjectStore store;
  for (const auto& c : store.apply(informer::Replace{{make_object("a", "x", "1")}})) {
    CHECK(c.in_initial_list);
  }
  // A watch event, then a relist after a 410: changes seen live, however they arrive.
  auto live = store.apply(informer::Upsert{make_object("a", "w", "2")});
  REQUIRE(live.size() == 1);
  CHECK_FALSE(live[0].in_initial_list);
  auto relist = store.apply(informer::Replace{
      {make_object("a", "x", "3"), make_object("a", "w", "2"), make_object("a", "v", "4")}});
  REQUIRE(relist.size() == 2);  // x updated, v added
  for (const auto& c : relist) CHECK_FALSE(c.in_initial_list);
}

TEST_CASE("store: replace_from a staging store is a Replace, one change at a time", "[store]") {
  ObjectStore store;
  ObjectStore staged;
  staged.apply(informer::Upsert{make_object("a", "x", "1")});
  staged.apply(informer::Upsert{make_object("b", "y", "2")});
  std::vector<std::string> seen;
  store.replace_from(staged, [&](const StoreChange& c) {
    CHECK(c.type == StoreChange::Type::added);
    CHECK(c.in_initial_list);  // the first list, however it arrived
    seen.push_back(object_key(*c.new_object));
  });
  CHECK(store.has_synced());
  CHECK(store.size() == 2);
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::string>{"a/x", "b/y"});

  // A relist: y unchanged (not reported), x updated, z new, and w, gone since, reported deleted.
  store.apply(informer::Upsert{make_object("d", "w", "3")});
  ObjectStore relisted;
  relisted.apply(informer::Upsert{make_object("a", "x", "5")});
  relisted.apply(informer::Upsert{make_object("b", "y", "2")});
  relisted.apply(informer::Upsert{make_object("c", "z", "6")});
  std::vector<std::string> changes;
  store.replace_from(relisted, [&](const StoreChange& c) {
    CHECK_FALSE(c.in_initial_list);
    const char* type = c.type == StoreChange::Type::added     ? "added "
                       : c.type == StoreChange::Type::updated ? "updated "
                                                              : "deleted ";
    changes.push_back(type + object_key(*c.new_object));
    // The change is made when the handler sees it.
    CHECK(store.contains(object_key(*c.new_object)) == (c.type != StoreChange::Type::deleted));
  });
  std::sort(changes.begin(), changes.end());
  CHECK(changes == std::vector<std::string>{"added c/z", "deleted d/w", "updated a/x"});
  CHECK(store.size() == 3);
  CHECK(meta_resource_version(*store.get("a/x")) == "5");
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

TEST_CASE("store: each read is a fresh DOM equal to what was stored", "[store]") {
  ObjectStore store;
  auto stored = make_object("a", "x", "1", "owner-1");
  store.apply(informer::Upsert{stored});
  auto first = store.get("a/x");
  auto second = store.get("a/x");
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first != second);  // parsed per read, not shared
  CHECK(*first == *stored);
  CHECK(*second == *stored);
  CHECK(controller_owner(*first)->uid == "owner-1");
  CHECK(store.contains("a/x"));
  CHECK_FALSE(store.contains("a/y"));
  CHECK_FALSE(store.get("a/y"));
  CHECK(store.keys() == std::vector<std::string>{"a/x"});
}

TEST_CASE("store: a cached object costs about its text, well under its DOM", "[store]") {
  constexpr int kObjects = 300;
  std::vector<ObjectPtr> objects;
  for (int i = 0; i < kObjects; ++i) {
    objects.push_back(make_object("namespace-" + std::to_string(i), "name-" + std::to_string(i),
                                  std::to_string(1000 + i), "owner-uid-" + std::to_string(i)));
  }
  const std::size_t text = compact_text(*objects[0]).size();
  std::size_t before = heap_in_use();
  std::vector<ObjectPtr> doms;
  for (const auto& o : objects) doms.push_back(compact_object(*o));
  const std::size_t dom_bytes = (heap_in_use() - before) / kObjects;
  ObjectStore store;
  before = heap_in_use();
  for (const auto& o : objects) store.apply(informer::Upsert{o});
  const std::size_t store_bytes = (heap_in_use() - before) / kObjects;
  INFO("per object: text " << text << ", exact DOM " << dom_bytes << ", stored " << store_bytes);
  // Stored: the deflated text, its key and the table's node (measured: text 304, exact DOM 885,
  // stored 120; 189 with a map of strings, 475 before the text was deflated); the smallest DOM
  // takes three times the text.
  CHECK(store_bytes * 3 < dom_bytes * 2);
  CHECK(store_bytes < text + 256);
}

TEST_CASE("store: objects of one kind cost a fraction of their text", "[store]") {
  // 1,000 objects that differ where objects of one kind do: name, uid, resourceVersion, owner.
  // Each is deflated against the first one's text.
  constexpr int kObjects = 1000;
  std::vector<ObjectPtr> objects;
  for (int i = 0; i < kObjects; ++i) {
    const std::string n = std::to_string(i);
    auto o = std::make_shared<rapidjson::Document>();
    o->Parse(
        R"({"apiVersion":"app.example.com/v1","kind":"AppService","metadata":{"name":"app-)" + n +
        R"(","namespace":"bench","uid":"0a1b2c3d-4e5f-4a6b-8c7d-)" + std::to_string(200000 + i) +
        R"(","resourceVersion":")" + std::to_string(52000 + 7 * i) +
        R"(","generation":1},"spec":{"replicas":1,"image":"registry.example.com/web:1.27.3",)"
        R"("port":8080,"serviceType":"ClusterIP"},"status":{"observedGeneration":1,)"
        R"("conditions":[{"type":"Available","status":"True","reason":"DeploymentAvailable"}]}})");
    REQUIRE_FALSE(o->HasParseError());
    objects.push_back(std::move(o));
  }
  const std::size_t text = compact_text(*objects[1]).size();
  // The thread's zlib streams (about 55 KiB, once per thread) are not the objects' cost: make
  // them before measuring, as any earlier store on this thread would have.
  const TextCodec warm("");
  REQUIRE(warm.decompress(warm.compress("{}")) == "{}");
  ObjectStore store;
  const std::size_t before = heap_in_use();
  for (const auto& o : objects) store.apply(informer::Upsert{o});
  const std::size_t store_bytes = (heap_in_use() - before) / kObjects;
  INFO("per object: text " << text << ", stored " << store_bytes);
  // Stored: the deflated text (about 60 bytes here), its key and the table's node.
  CHECK(store_bytes * 2 < text);
  CHECK(*store.get("bench/app-500") == *objects[500]);
}

TEST_CASE("store: the table adds one small node per object beyond its key and text", "[store]") {
  // Keys as long as the benchmark's ("bench-ours-1000-0-1-12345/app-00001"): past the 15 bytes a
  // std::string keeps inline. A map of string to string took an 80-byte node, a key allocation
  // and a text allocation: about 120 bytes (ASan's count) or 170 (glibc's) beyond key and text.
  constexpr int kObjects = 1000;
  std::vector<ObjectPtr> objects;
  for (int i = 0; i < kObjects; ++i) {
    objects.push_back(make_object("bench-ours-1000-0-1-12345", "app-" + std::to_string(10000 + i),
                                  std::to_string(1000 + i), "owner-uid-" + std::to_string(i)));
  }
  const std::size_t key = object_key(*objects[0]).size();
  // What the store deflates: each text against the first one's (as ObjectStore::pack does).
  const TextCodec codec(compact_text(*objects[0]));
  std::size_t data = 0;
  for (const auto& o : objects) data += codec.compress(compact_text(*o)).size();
  data /= kObjects;
  ObjectStore store;
  const std::size_t before = heap_in_use();
  for (const auto& o : objects) store.apply(informer::Upsert{o});
  const std::size_t stored = (heap_in_use() - before) / kObjects;
  INFO("per object: key " << key << ", deflated text " << data << ", stored " << stored);
  CHECK(stored < key + data + 80);
  // Replacing an object keeps one entry.
  auto changed = make_object("bench-ours-1000-0-1-12345", "app-10500", "9999", "owner-uid-500");
  store.apply(informer::Upsert{changed});
  CHECK(store.size() == kObjects);
  CHECK(*store.get("bench-ours-1000-0-1-12345/app-10500") == *changed);
  store.apply(informer::Delete{changed});
  CHECK_FALSE(store.contains("bench-ours-1000-0-1-12345/app-10500"));
  CHECK(store.size() == kObjects - 1);
}

namespace {

// An AppService as the API server sends it, just created or with the status it carries later;
// `padding` bytes of annotation make it longer.
ObjectPtr app(int i, bool with_status, std::size_t padding = 0) {
  const std::string n = std::to_string(i);
  auto o = std::make_shared<rapidjson::Document>();
  std::string text =
      R"({"apiVersion":"app.example.com/v1","kind":"AppService","metadata":{"name":"app-)" + n +
      R"(","namespace":"bench","uid":"0a1b2c3d-4e5f-4a6b-8c7d-)" + std::to_string(200000 + i) +
      R"(","resourceVersion":")" + std::to_string(52000 + 7 * i) +
      R"(","generation":1,"annotations":{"note":")" + std::string(padding, 'x') +
      R"("}},"spec":{"replicas":1,"image":"registry.example.com/web:1.27.3"}})";
  if (with_status) {
    const std::string when = "2026-12-03T21:0" + std::to_string(i % 10) + ":00Z";
    auto condition = [&](const char* type, const char* status, const char* reason,
                         const std::string& message) {
      return std::string(R"({"type":")") + type + R"(","status":")" + status + R"(","reason":")" +
             reason + R"(","message":")" + message + R"(","lastTransitionTime":")" + when + R"("})";
    };
    text.pop_back();
    text += R"(,"status":{"observedGeneration":1,"readyReplicas":1,"conditions":[)" +
            condition("Available", "True", "DeploymentAvailable",
                      "Deployment bench/app-" + n + " has 1 of 1 replicas available") +
            "," +
            condition("Progressing", "False", "RolloutComplete",
                      "Deployment bench/app-" + n + " has finished its rollout") +
            "," + condition("Degraded", "False", "AsExpected", "") + "]}}";
  }
  o->Parse(text);
  return o;
}

}  // namespace

TEST_CASE("store: a first object without status does not stay the dictionary", "[store]") {
  // The first AppService or Deployment a store sees is usually just created, without the status
  // every later version carries; deflated against it, each status is stored nearly whole.
  constexpr int kObjects = 1000;
  const TextCodec warm("");  // the thread's zlib streams, as in the test above
  REQUIRE(warm.decompress(warm.compress("{}")) == "{}");
  ObjectStore store;
  const std::size_t before = heap_in_use();
  store.apply(informer::Upsert{app(0, false)});
  for (int i = 1; i < kObjects; ++i) store.apply(informer::Upsert{app(i, true)});
  const std::size_t stored = (heap_in_use() - before) / kObjects;
  const std::size_t text = compact_text(*app(1, true)).size();
  INFO("per object: text " << text << ", stored " << stored);
  // Measured: 140 bytes per object; 339 against the first object's text.
  CHECK(stored * 4 < text);
  CHECK(*store.get("bench/app-0") == *app(0, false));
  CHECK(*store.get("bench/app-999") == *app(999, true));
}

TEST_CASE("store: objects stored before each dictionary change read back whole", "[store]") {
  // Texts growing by a quarter and more, past deflate's 4 KiB window: each can become the
  // dictionary, and every object stored before must still read back as it was.
  ObjectStore store;
  std::vector<ObjectPtr> stored;
  for (int i = 0; i < 100; ++i) stored.push_back(app(i, false));
  for (std::size_t padding = 100, i = 100; padding < 8192; padding *= 2, ++i) {
    stored.push_back(app(static_cast<int>(i), true, padding));
  }
  for (const auto& o : stored) {
    store.apply(informer::Upsert{o});
    for (const auto& earlier : stored) {
      if (&earlier == &o) break;
      REQUIRE(*store.get(object_key(*earlier)) == *earlier);
    }
  }
  CHECK(store.size() == stored.size());
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
