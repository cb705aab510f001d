// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ctrl/base/clock.h"
#include "ctrl/cache/informer.h"
#include "ctrl/cache/object_store.h"
#include "ctrl/object/label_selector.h"
#include "kube/core/resource_path.h"

namespace ctrl {

// Read your own writes (Kubernetes 1.36's KEP-5647, "staleness mitigation for controllers"): a
// reconciler records the resourceVersion the API server returned for each of its writes, per
// object and per cache the object lives in, under the key of the reconcile that made it (the
// owner's). Before that key is reconciled again, the controller asks `behind(key)`: while any of
// those caches has not yet observed the resourceVersion written (Informer::
// newest_resource_version), the reconcile would start from a cache older than its own last
// write and could write the same thing again, revert itself, or count a child wrong; it is held
// back and requeued shortly instead (Controller::Options::write_tracker).
//
// resourceVersions compare as unsigned integers (KEP-5504, Kubernetes 1.35+). Anything that is
// not one fails open: such a write is not recorded, and a cache whose newest resourceVersion is
// not one holds nothing back. A record goes when the cache has caught up with it, when the
// object's deletion reaches that cache (`deleted`, which `forget_deleted` hands to an informer),
// when the write was a DELETE (`forget`), and when the owner itself is deleted (`forget_owner`).
// A write that ends in the object's deletion (it removed the last finalizer of an object being
// deleted) is answered with the resourceVersion the cache already holds: its record holds the
// key back until that object (that uid) is gone from the cache. Records are per key: when several
// keys write one object (a shared registry), each is held until the cache has its own write.
// A record is for one uid: once the cache holds an object of that name with another uid (it was
// recreated), the predecessor's record holds nothing back. A record older than `max_hold` holds
// nothing back either: a cache that never observes a write (no bookmarks, no other events for
// its kind, the object filtered out of it) must not stall its key for good.
//
// Like everything in the runtime it lives on the one event-loop thread: no locks.
class WriteTracker {
 public:
  static constexpr std::chrono::seconds kDefaultMaxHold{30};

  explicit WriteTracker(const Clock& clock = default_clock(),
                        std::chrono::milliseconds max_hold = kDefaultMaxHold)
      : clock_(clock), max_hold_(max_hold) {}

  // The newest resourceVersion a cache reflects: Informer::newest_resource_version.
  using NewestResourceVersion = std::function<std::string()>;

  // One record that holds a key back: for the log line.
  struct Behind {
    std::string cache;  // the cache's name ("apps/v1 deployments")
    std::string object_key;
    std::uint64_t written = 0;  // the resourceVersion our write returned
    std::string observed;       // the cache's newest resourceVersion
  };

  // What a cache holds, so that a write by path (record_write) finds the caches that will see
  // it: objects of the collection's group and resource, in its namespace (empty: every one),
  // whose labels match the selector. A cache without a scope is only written to by store.
  struct Scope {
    Scope() = default;
    Scope(kube::ResourcePath c, std::string selector)
        : collection(std::move(c)), label_selector(std::move(selector)) {}
    kube::ResourcePath collection;
    std::string label_selector;
  };

  // Caches must be known before writes to them are recorded (writes to an unknown cache are not
  // recorded: fail open). `name` is for logs. A selector the tracker cannot read gives the cache
  // no scope (fail open).
  void add_cache(const ObjectStore& store, std::string name, NewestResourceVersion newest,
                 std::optional<Scope> scope = std::nullopt);
  // The informer's store, scope and newest resourceVersion, and forget_deleted as its handler.
  // Once per informer: a second call changes nothing.
  void add_informer(Informer& informer);

  // A write to `object` (its path; a subresource names the object's own caches) returned
  // `written`: recorded in every cache whose scope holds it (ctrl::Client calls this).
  void record_write(const kube::ResourcePath& object, const std::string& owner_key,
                    const rapidjson::Value& written);
  // A DELETE of `object` was accepted: forgotten in every cache of its resource and namespace.
  void forget_write(const kube::ResourcePath& object);

  // A write through the runtime returned `written` (the object as the server has it after the
  // write) for the object in `cache`, made by the reconcile of `owner_key`.
  void record(const ObjectStore& cache, const std::string& owner_key,
              const rapidjson::Value& written);
  // A DELETE of `object_key` in `cache`: whatever our earlier writes to it were, they are moot.
  void forget(const ObjectStore& cache, const std::string& object_key);
  // The owner is gone: every record made by its reconciles goes.
  void forget_owner(const std::string& owner_key);
  // The object's deletion reached `cache` (the last state the server sent).
  void deleted(const ObjectStore& cache, const rapidjson::Value& object);
  // An informer handler that calls `deleted` for every deletion the cache sees.
  Informer::Handler forget_deleted(const ObjectStore& cache);

  // The first record of `owner_key` that a cache has not caught up with, if any. Records a cache
  // has caught up with, and those of a predecessor (another uid), are dropped on the way.
  std::optional<Behind> behind(const std::string& owner_key);

  // Records held (for tests and the memory bound).
  std::size_t size() const;

 private:
  struct Cache {
    std::string name;
    NewestResourceVersion newest;
    std::optional<Scope> scope;
    std::optional<LabelSelector> selector;  // of the scope
  };
  // Whether `c`'s scope holds objects at `object` (resource and namespace; labels not checked).
  static bool holds_path(const Cache& c, const kube::ResourcePath& object);
  struct Record {
    const ObjectStore* cache = nullptr;
    std::string object_key;
    std::string uid;
    std::uint64_t resource_version = 0;
    // The write ended in the object's deletion: caught up once the cache no longer holds it.
    bool deleting = false;
    Clock::TimePoint recorded_at;
  };
  static const Clock& default_clock();
  // Drops every key's record of (cache, object_key); with `uid`, only records of it.
  void drop(const ObjectStore* cache, std::string_view object_key,
            std::optional<std::string_view> uid = std::nullopt);
  // Removes `owner_key` from the keys that hold a record of (cache, object_key).
  void unlink(const ObjectStore* cache, const std::string& object_key,
              const std::string& owner_key);
  // Whether the cache has not yet observed the write `r` records.
  bool stale(const Record& r, const Cache& cache, std::string& observed) const;

  const Clock& clock_;
  std::chrono::milliseconds max_hold_;
  std::unordered_map<const ObjectStore*, Cache> caches_;
  // By owner key: a handful of records (the owner and its children) per key.
  std::unordered_map<std::string, std::vector<Record>> records_;
  // (cache, object key) -> the keys with a record of it, so a deletion seen in a cache finds them.
  std::unordered_map<const ObjectStore*, std::unordered_map<std::string, std::vector<std::string>>>
      owners_;
};

}  // namespace ctrl
