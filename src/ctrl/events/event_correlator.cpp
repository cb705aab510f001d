// SPDX-License-Identifier: Apache-2.0
#include "ctrl/events/event_correlator.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

namespace ctrl {

namespace {

// Event names are DNS subdomains at most 253 bytes long.
constexpr std::size_t kMaxNameBytes = 253;

static_assert(sizeof(std::size_t) == 8, "message hashes are 64 bits");

std::uint64_t message_hash(const std::string& message) {
  const std::uint64_t h = std::hash<std::string>{}(message);
  return h == 0 ? 1 : h;  // 0 names the combined Event of a group
}

std::size_t mix(std::size_t seed, std::size_t h) {
  return seed ^ (h + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

std::size_t object_reason_hash(const ObjectId& object, std::uint64_t reason) {
  return mix(ObjectIdHash{}(object), reason);
}

// client-go names an Event `<object name>.<hex of the timestamp's UnixNano>`, the name cut so
// the whole stays a valid DNS subdomain.
std::string event_name(const std::string& involved_name, std::int64_t suffix) {
  char hex[24];
  const int n = std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(suffix));
  const std::size_t suffix_len = static_cast<std::size_t>(n) + 1;
  std::string prefix = involved_name.substr(0, kMaxNameBytes - suffix_len);
  // A cut name must not end in '.' or '-' (then "x-.1a" or "x..1a" would be an invalid name).
  while (prefix.size() < involved_name.size() && !prefix.empty() &&
         (prefix.back() == '.' || prefix.back() == '-')) {
    prefix.pop_back();
  }
  return prefix + "." + std::string(hex, static_cast<std::size_t>(n));
}

// Drops the entry seen longest ago, like client-go's LRU. Linear, but only when the map is full.
template <typename Map>
void evict_oldest(Map& map) {
  auto oldest = map.begin();
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->second.last_seen < oldest->second.last_seen) oldest = it;
  }
  if (oldest != map.end()) map.erase(oldest);
}

}  // namespace

EventCorrelator::EventCorrelator(const Clock& clock, Options options)
    : clock_(clock), options_(options), spam_(clock, options.spam), repeats_(clock, options.spam) {
  CHECK_GT(options_.max_events, 0u);
  CHECK_GE(options_.max_similar, 1u);
}

EventWrite EventCorrelator::observe(const ObjectReference& involved, EventType type,
                                    std::string reason, std::string message) {
  EventWrite out;
  if (message.size() > kMaxEventMessageBytes) {
    message = truncate_utf8(message, kMaxEventMessageBytes);
  }
  const auto now = clock_.now();
  const auto wall = clock_.wall_now();

  // 1. EventAggregator: count distinct messages of this object, type and reason.
  GroupKey group{object_id(involved), std::hash<std::string>{}(reason), type};
  auto similar = similar_.find(group);
  if (similar == similar_.end()) {
    if (similar_.size() >= options_.max_events) evict_oldest(similar_);
    similar = similar_.emplace(group, Similar{}).first;
  } else if (now - similar->second.last_seen > options_.window) {
    similar->second.messages.clear();
  }
  Similar& s = similar->second;
  s.last_seen = now;
  const std::uint64_t hash = message_hash(message);
  if (std::find(s.messages.begin(), s.messages.end(), hash) == s.messages.end()) {
    s.messages.push_back(hash);
  }
  const bool combined = s.messages.size() >= options_.max_similar;
  if (combined) {
    // Like client-go's PopAny: the set stays just under the threshold, so every further
    // different message keeps going into the combined Event.
    s.messages.erase(s.messages.begin());
    message = truncate_utf8(std::string(kCombinedPrefix) + message, kMaxEventMessageBytes);
  }

  // 2. EventLogger: a repeat within the window patches the Event it repeats.
  EventKey key{group.object, group.reason, combined ? 0 : hash, type, combined};
  auto it = events_.find(key);
  const bool repeat = it != events_.end() && now - it->second.last_seen <= options_.window;

  // 3. The spam filter. Unlike client-go it runs before the cache is updated: a dropped
  // occurrence leaves no trace, so the cache never names an Event that was never sent (client-go
  // recovers from that with the 404 fallback, which we also keep).
  if (!(repeat ? repeats_ : spam_).allow(key.object)) return out;

  Entry entry;
  if (repeat) {
    entry = it->second;
    entry.count += 1;
  } else {
    entry.suffix = next_suffix();
    entry.first_timestamp = wall;
  }
  entry.last_seen = now;
  if (it != events_.end()) {
    it->second = entry;
  } else {
    if (events_.size() >= options_.max_events) evict_oldest(events_);
    events_.emplace(key, entry);
  }

  EventRecord& event = out.event;
  event.name = event_name(involved.name, entry.suffix);
  event.ns = involved.ns.empty() ? "default" : involved.ns;
  event.involved = involved;
  event.type = type;
  event.reason = std::move(reason);
  event.message = std::move(message);
  event.count = entry.count;
  event.first_timestamp = entry.first_timestamp;
  event.last_timestamp = wall;
  out.action = repeat ? EventWrite::Action::patch : EventWrite::Action::create;
  return out;
}

// Two Events in one nanosecond (or with a fake clock) would share a name, so the suffix, the
// wall clock's UnixNano, also strictly increases.
std::int64_t EventCorrelator::next_suffix() {
  const auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.wall_now().time_since_epoch())
          .count();
  last_suffix_ = std::max<std::int64_t>(nanos, last_suffix_ + 1);
  return last_suffix_;
}

std::size_t EventCorrelator::KeyHash::operator()(const EventKey& k) const noexcept {
  const std::size_t h = mix(object_reason_hash(k.object, k.reason), k.message);
  return mix(h, static_cast<std::size_t>(k.type) * 2 + (k.combined ? 1 : 0));
}

std::size_t EventCorrelator::KeyHash::operator()(const GroupKey& k) const noexcept {
  return mix(object_reason_hash(k.object, k.reason), static_cast<std::size_t>(k.type));
}

std::size_t EventCorrelator::expire() {
  const auto now = clock_.now();
  const auto stale = [&](const auto& entry) {
    return now - entry.second.last_seen > options_.window;
  };
  const std::size_t events = std::erase_if(events_, stale);
  const std::size_t groups = std::erase_if(similar_, stale);
  return events + groups + spam_.expire() + repeats_.expire();
}

void EventCorrelator::forget(const std::string& uid) {
  if (uid.empty()) return;
  const ObjectId id = uid_object_id(uid);
  std::erase_if(events_, [&](const auto& entry) { return entry.first.object == id; });
  std::erase_if(similar_, [&](const auto& entry) { return entry.first.object == id; });
  spam_.forget(id);
  repeats_.forget(id);
}

}  // namespace ctrl
