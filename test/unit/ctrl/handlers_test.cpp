// SPDX-License-Identifier: Apache-2.0
// ctrl/handlers.h: the keys each builder part queues for a change, the status-only predicate, and
// the one priority rule every handler applies (for_kind, owns and watches alike).

#include "ctrl/handlers.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "ctrl/cache/object_store.h"

using asop::ObjectKey;
using asop::StoreChange;
using Type = asop::StoreChange::Type;

namespace {

asop::ObjectPtr object(const std::string& json) {
  auto d = std::make_shared<rapidjson::Document>();
  d->Parse(json.c_str());
  REQUIRE_FALSE(d->HasParseError());
  return d;
}

asop::ObjectPtr child(const std::string& name, const std::string& rv, const std::string& owner,
                      const std::string& owner_api = "app.example.com/v1",
                      const std::string& owner_kind = "AppService") {
  return object(R"({"metadata":{"namespace":"ns","name":")" + name + R"(","resourceVersion":")" +
                rv + R"(","ownerReferences":[{"apiVersion":")" + owner_api + R"(","kind":")" +
                owner_kind + R"(","name":")" + owner + R"(","uid":"u","controller":true}]}})");
}

struct Queue {
  ctrl::FakeClock clock;
  ctrl::MetricsRegistry metrics;
  ctrl::WorkQueue queue{"test", clock, ctrl::default_controller_rate_limiter(clock), metrics};
  std::vector<ctrl::QueueItem> drain() {
    std::vector<ctrl::QueueItem> out;
    while (auto item = queue.get_with_priority()) {
      out.push_back(*item);
      queue.done(item->key);
    }
    return out;
  }
};

}  // namespace

TEST_CASE("handlers: one priority rule: initial-list adds and no-change updates wait",
          "[handlers]") {
  auto v1 = object(R"({"metadata":{"namespace":"ns","name":"a","resourceVersion":"1"}})");
  auto v2 = object(R"({"metadata":{"namespace":"ns","name":"a","resourceVersion":"2"}})");
  CHECK(ctrl::handlers::priority_of(StoreChange{Type::added, nullptr, v1, true}) ==
        ctrl::kLowPriority);
  CHECK(ctrl::handlers::priority_of(StoreChange{Type::added, nullptr, v1, false}) == 0);
  CHECK(ctrl::handlers::priority_of(StoreChange{Type::updated, v1, v1, false}) ==
        ctrl::kLowPriority);
  CHECK(ctrl::handlers::priority_of(StoreChange{Type::updated, v1, v2, false}) == 0);
  CHECK(ctrl::handlers::priority_of(StoreChange{Type::deleted, v2, v2, false}) == 0);
}

TEST_CASE("handlers: own_key names the object, also a deleted one", "[handlers]") {
  auto a = object(R"({"metadata":{"namespace":"ns","name":"a","resourceVersion":"1"}})");
  auto cluster = object(R"({"metadata":{"name":"n","resourceVersion":"1"}})");
  CHECK(ctrl::handlers::own_key(StoreChange{Type::added, nullptr, a}) ==
        std::vector<ObjectKey>{ObjectKey("ns", "a")});
  CHECK(ctrl::handlers::own_key(StoreChange{Type::deleted, a, nullptr}) ==
        std::vector<ObjectKey>{ObjectKey("ns", "a")});
  CHECK(ctrl::handlers::own_key(StoreChange{Type::added, nullptr, cluster}) ==
        std::vector<ObjectKey>{ObjectKey("", "n")});
  CHECK(ctrl::handlers::own_key(StoreChange{Type::deleted, nullptr, nullptr}).empty());
}

TEST_CASE("handlers: controller_owner_keys: both owners of a moved child, only its group and kind",
          "[handlers]") {
  auto keys = ctrl::handlers::controller_owner_keys("app.example.com", "AppService");
  CHECK(keys(StoreChange{Type::updated, child("c", "1", "old"), child("c", "2", "new")}) ==
        std::vector<ObjectKey>{ObjectKey("ns", "old"), ObjectKey("ns", "new")});
  CHECK(keys(StoreChange{Type::updated, child("c", "1", "same"), child("c", "2", "same")}) ==
        std::vector<ObjectKey>{ObjectKey("ns", "same")});
  CHECK(keys(StoreChange{Type::added, nullptr, child("c", "1", "rs", "apps/v1", "ReplicaSet")})
            .empty());
  CHECK(keys(StoreChange{Type::added, nullptr, child("c", "1", "x", "other.io/v1", "AppService")})
            .empty());
  ctrl::ObjectStore owners;
  owners.apply(ctrl::informer::Replace{
      {object(R"({"metadata":{"namespace":"ns","name":"mine","resourceVersion":"1"}})")}});
  auto in_shard = ctrl::handlers::controller_owner_keys("app.example.com", "AppService", &owners);
  CHECK(in_shard(StoreChange{Type::added, nullptr, child("c", "1", "theirs")}).empty());
  CHECK(in_shard(StoreChange{Type::added, nullptr, child("c", "1", "mine")}) ==
        std::vector<ObjectKey>{ObjectKey("ns", "mine")});
}

TEST_CASE("handlers: not_status_only_update refuses an update of status alone", "[handlers]") {
  auto before = object(
      R"({"metadata":{"namespace":"ns","name":"a","resourceVersion":"1"},"spec":{"x":1},"status":{"s":1}})");
  auto status = object(
      R"({"metadata":{"namespace":"ns","name":"a","resourceVersion":"2"},"spec":{"x":1},"status":{"s":2}})");
  auto spec = object(
      R"({"metadata":{"namespace":"ns","name":"a","resourceVersion":"3"},"spec":{"x":2},"status":{"s":1}})");
  CHECK_FALSE(ctrl::handlers::not_status_only_update(StoreChange{Type::updated, before, status}));
  CHECK(ctrl::handlers::not_status_only_update(StoreChange{Type::updated, before, spec}));
  CHECK(ctrl::handlers::not_status_only_update(StoreChange{Type::added, nullptr, status}));
  CHECK(ctrl::handlers::not_status_only_update(StoreChange{Type::deleted, before, nullptr}));
}

TEST_CASE("handlers: enqueue puts a watches() map's keys in at the one priority rule",
          "[handlers]") {
  Queue q;
  auto map = [](const StoreChange&) {
    return std::vector<ObjectKey>{ObjectKey("ns", "x"), ObjectKey("", "cluster-wide")};
  };
  auto handler = ctrl::handlers::enqueue(q.queue, map);
  auto v1 = object(R"({"metadata":{"namespace":"ns","name":"a","resourceVersion":"1"}})");
  handler(StoreChange{Type::updated, v1, v1});  // a resync: low priority, as for_kind's
  auto items = q.drain();
  REQUIRE(items.size() == 2);
  CHECK(items[0].key == "ns/x");
  CHECK(items[0].priority == ctrl::kLowPriority);
  CHECK(items[1].key == "cluster-wide");

  auto filtered = ctrl::handlers::enqueue(q.queue, map, [](const StoreChange&) { return false; });
  filtered(StoreChange{Type::added, nullptr, v1});
  CHECK(q.drain().empty());
}
