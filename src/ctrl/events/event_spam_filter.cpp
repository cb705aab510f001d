// SPDX-License-Identifier: Apache-2.0
#include "ctrl/events/event_spam_filter.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <functional>

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

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The 128 bits of a uid in the API server's (lowercase) form, such as
// "5b1c3a2e-0f4d-4c8a-9e7b-000000000042", or nothing.
bool parse_uuid(std::string_view text, ObjectId& id) {
  if (text.size() != 36) return false;
  std::uint64_t words[2] = {0, 0};
  int digits = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return false;
      continue;
    }
    const int d = hex_digit(text[i]);
    if (d < 0) return false;
    std::uint64_t& w = words[digits / 16];
    w = (w << 4) | static_cast<std::uint64_t>(d);
    ++digits;
  }
  id = {words[0], words[1]};
  return true;
}

ObjectId hash_id(std::string_view text) {
  std::uint64_t fnv = 0xcbf29ce484222325ULL;  // FNV-1a, independent of std::hash's function
  for (const char c : text) {
    fnv = (fnv ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  }
  return {std::hash<std::string_view>{}(text), fnv};
}

}  // namespace

ObjectId uid_object_id(std::string_view uid) {
  ObjectId id;
  if (parse_uuid(uid, id)) return id;
  return hash_id(uid);
}

ObjectId object_id(const ObjectReference& o) {
  if (!o.uid.empty()) return uid_object_id(o.uid);
  return hash_id(object_key(o));
}

EventSpamFilter::EventSpamFilter(const Clock& clock, Options options)
    : clock_(clock), options_(options) {
  CHECK_GE(options_.burst, 1.0);
  CHECK_GT(options_.refill_interval.count(), 0);
  CHECK_GT(options_.max_objects, 0u);
}

bool EventSpamFilter::allow(const ObjectId& key) {
  const auto now = clock_.now();
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= options_.max_objects) evict_oldest();
    it = buckets_.emplace(key, Bucket{options_.burst, now}).first;
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
