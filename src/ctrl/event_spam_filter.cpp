#include "ctrl/event_spam_filter.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>

namespace ctrl {

namespace {

// client-go's getSpamKey: the source plus the involved object's identity (no resourceVersion, so
// every generation of the object shares one bucket).
std::string spam_key(const ObjectReference& o) {
  std::string key;
  key.reserve(o.api_version.size() + o.kind.size() + o.ns.size() + o.name.size() + o.uid.size() +
              5);
  for (const std::string* part : {&o.api_version, &o.kind, &o.ns, &o.name}) {
    key += *part;
    key += '\x1f';  // cannot occur in names, so parts never run together
  }
  key += o.uid;
  return key;
}

}  // namespace

EventSpamFilter::EventSpamFilter(const Clock& clock, Options options)
    : clock_(clock), options_(options) {
  CHECK_GE(options_.burst, 1.0);
  CHECK_GT(options_.refill_interval.count(), 0);
  CHECK_GT(options_.max_objects, 0u);
}

bool EventSpamFilter::allow(const ObjectReference& involved) {
  const auto now = clock_.now();
  std::string key = spam_key(involved);
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
  if (uid.empty()) return;
  std::erase_if(buckets_, [&](const auto& entry) {
    const std::string& key = entry.first;  // ...'\x1f' uid (spam_key)
    return key.size() > uid.size() && key.ends_with(uid) &&
           key[key.size() - uid.size() - 1] == '\x1f';
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
