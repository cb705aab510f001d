#include "ctrl/event_spam_filter.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>

namespace ctrl {

std::string object_key(const ObjectReference& o) {
  if (!o.uid.empty()) return o.uid;
  std::string key;
  for (const std::string* part : {&o.api_version, &o.kind, &o.ns, &o.name}) {
    key += '\x1f';  // cannot occur in a uid or a name, so this never equals a uid
    key += *part;
  }
  return key;
}

EventSpamFilter::EventSpamFilter(const Clock& clock, Options options)
    : clock_(clock), options_(options) {
  CHECK_GE(options_.burst, 1.0);
  CHECK_GT(options_.refill_interval.count(), 0);
  CHECK_GT(options_.max_objects, 0u);
}

bool EventSpamFilter::allow(const ObjectReference& involved) {
  const auto now = clock_.now();
  std::string key = object_key(involved);
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= options_.max_objects) evict_oldest();
    it = buckets_.emplace(std::move(key), Bucket{options_.burst, now}).first;
  }
  Bucket& b = it->second;
  // Continuous refill like golang.org/x/time/rate behind flowcontrol's token bucket.
  const double elapsed = std::chrono::duration<double>(now - b.last).count();
  const double interval = std::chrono::duration<double>(options_.refill_interval).count();
  if (elapsed > 0) b.tokens = std::min(options_.burst, b.tokens + elapsed / interval);
  b.last = now;
  if (b.tokens < 1.0) return false;
  b.tokens -= 1.0;
  return true;
}

void EventSpamFilter::forget(const std::string& uid) {
  if (!uid.empty()) buckets_.erase(uid);
}

std::size_t EventSpamFilter::expire() {
  const auto now = clock_.now();
  const double interval = std::chrono::duration<double>(options_.refill_interval).count();
  return std::erase_if(buckets_, [&](const auto& entry) {
    const Bucket& b = entry.second;
    return b.tokens + std::chrono::duration<double>(now - b.last).count() / interval >=
           options_.burst;
  });
}

// Drops the bucket touched longest ago, like client-go's LRU. Linear, but only when the cache is
// full, and an evicted object merely starts again with a full bucket.
void EventSpamFilter::evict_oldest() {
  auto oldest = buckets_.begin();
  for (auto it = buckets_.begin(); it != buckets_.end(); ++it) {
    if (it->second.last < oldest->second.last) oldest = it;
  }
  if (oldest != buckets_.end()) buckets_.erase(oldest);
}

}  // namespace ctrl
