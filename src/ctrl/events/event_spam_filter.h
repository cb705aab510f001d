// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ctrl/base/clock.h"
#include "ctrl/events/event.h"

namespace ctrl {

// Limits of EventSpamFilter.
struct EventSpamFilterOptions {
  // Not an aggregate: GCC 12 co_await temporaries (kube/list_options.h).
  EventSpamFilterOptions() = default;

  double burst = 25;                                          // client-go defaultSpamBurst
  Clock::Duration refill_interval = std::chrono::minutes(5);  // 1/defaultSpamQPS
  std::size_t max_objects = 4096;                             // client-go maxLruCacheEntries
};

// client-go's EventSourceObjectSpamFilter: a token bucket per involved object (the source is the
// same for every Event of one recorder), burst 25 refilled at 1 token per 5 minutes, so one object
// stuck in a failure loop cannot flood etcd with Events while others keep reporting. Pure: time
// comes from the injected clock.
// How the Event caches name an object: its uid, which no other object ever has (client-go's
// getSpamKey also holds the source, ours for every Event, and kind, namespace and name, which the
// uid already tells apart). An object without a uid is named by its kind, namespace and name.
std::string object_key(const ObjectReference& o);

// The same name in 16 bytes, so that no cache entry holds a copy of a 36-byte uid: a uid in the
// API server's form (8-4-4-4-12 hex digits) is its 128 bits; any other key is a 128-bit hash of
// its text, which tells two objects apart with all but a 2^-128 chance.
struct ObjectId {
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  bool operator==(const ObjectId&) const = default;
};
ObjectId object_id(const ObjectReference& o);
// The id of the object with this (non-empty) uid.
ObjectId uid_object_id(std::string_view uid);
struct ObjectIdHash {
  std::size_t operator()(const ObjectId& id) const noexcept {
    return id.high ^ (id.low * 0x9e3779b97f4a7c15ULL);
  }
};

class EventSpamFilter {
 public:
  using Options = EventSpamFilterOptions;

  explicit EventSpamFilter(const Clock& clock, Options options = {});

  // Takes a token for `involved`: false when its bucket is empty and the Event must be dropped.
  bool allow(const ObjectReference& involved) { return allow(object_id(involved)); }
  bool allow(const ObjectId& involved);

  // Drops the bucket of this object (it was deleted; a uid never comes back).
  void forget(const ObjectId& object) { buckets_.erase(object); }

  // Drops the buckets that have refilled to the burst: one is the same as no bucket. Returns how
  // many went.
  std::size_t expire();

  std::size_t tracked_objects() const { return buckets_.size(); }

 private:
  struct Bucket {
    double tokens = 0;
    Clock::TimePoint last;  // when `tokens` was last brought up to date
  };

  void evict_oldest();

  const Clock& clock_;
  Options options_;
  std::unordered_map<ObjectId, Bucket, ObjectIdHash> buckets_;
};

}  // namespace ctrl
