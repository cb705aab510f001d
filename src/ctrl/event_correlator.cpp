#include "ctrl/event_correlator.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

namespace ctrl {

namespace {

// Event names are DNS subdomains at most 253 bytes long.
constexpr std::size_t kMaxNameBytes = 253;

// client-go's EventAggregatorByReasonFunc: the involved object's identity, type and reason (the
// source, reportingController and reportingInstance are the recorder's own, the same for all).
std::string similar_key(const ObjectReference& o, EventType type, const std::string& reason) {
  std::string key;
  for (const std::string* part : {&o.api_version, &o.kind, &o.ns, &o.name, &o.uid, &reason}) {
    key += *part;
    key += '\x1f';
  }
  key += to_string(type);
  return key;
}

// client-go's getEventKey: the above and the message (not the object's resourceVersion, so a
// repeat across generations of the object still aggregates). The combined Event has one key per
// group, whatever its latest message.
std::string event_key(const std::string& similar, const std::string& message, bool combined) {
  return similar + (combined ? "\x1e" : "\x1f") + (combined ? std::string() : message);
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
  const std::string group = similar_key(involved, type, reason);
  auto similar = similar_.find(group);
  if (similar == similar_.end()) {
    if (similar_.size() >= options_.max_events) evict_oldest(similar_);
    similar = similar_.emplace(group, Similar{}).first;
  } else if (now - similar->second.last_seen > options_.window) {
    similar->second.messages.clear();
  }
  Similar& s = similar->second;
  s.last_seen = now;
  s.messages.insert(std::hash<std::string>{}(message));
  const bool combined = s.messages.size() >= options_.max_similar;
  if (combined) {
    // Like client-go's PopAny: the set stays just under the threshold, so every further
    // different message keeps going into the combined Event.
    s.messages.erase(s.messages.begin());
    message = truncate_utf8(std::string(kCombinedPrefix) + message, kMaxEventMessageBytes);
  }

  // 2. EventLogger: a repeat within the window patches the Event it repeats.
  std::string key = event_key(group, message, combined);
  auto it = events_.find(key);
  const bool repeat = it != events_.end() && now - it->second.last_seen <= options_.window;

  // 3. The spam filter. Unlike client-go it runs before the cache is updated: a dropped
  // occurrence leaves no trace, so the cache never names an Event that was never sent (client-go
  // recovers from that with the 404 fallback, which we also keep).
  if (!(repeat ? repeats_ : spam_).allow(involved)) return out;

  if (repeat) {
    Entry& e = it->second;
    e.last_seen = now;
    e.event.count += 1;
    e.event.last_timestamp = wall;
    e.event.message = std::move(message);
    e.event.involved.resource_version = involved.resource_version;
    out.action = EventWrite::Action::patch;
    out.event = e.event;
    return out;
  }

  EventRecord event;
  event.name = unique_name(involved.name);
  event.ns = involved.ns.empty() ? "default" : involved.ns;
  event.involved = involved;
  event.type = type;
  event.reason = std::move(reason);
  event.message = std::move(message);
  event.count = 1;
  event.first_timestamp = wall;
  event.last_timestamp = wall;
  if (it != events_.end()) {
    it->second = Entry{event, now};
  } else {
    if (events_.size() >= options_.max_events) evict_oldest(events_);
    events_.emplace(std::move(key), Entry{event, now});
  }
  out.action = EventWrite::Action::create;
  out.event = std::move(event);
  return out;
}

// client-go names an Event `<object name>.<hex of the timestamp's UnixNano>`. Two Events in one
// nanosecond (or with a fake clock) would collide, so the suffix also strictly increases.
std::string EventCorrelator::unique_name(const std::string& involved_name) {
  const auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.wall_now().time_since_epoch())
          .count();
  last_suffix_ = std::max<std::int64_t>(nanos, last_suffix_ + 1);
  char hex[24];
  const int n =
      std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(last_suffix_));
  const std::size_t suffix_len = static_cast<std::size_t>(n) + 1;
  std::string prefix = involved_name.substr(0, kMaxNameBytes - suffix_len);
  // A cut name must not end in '.' or '-' (then "x-.1a" or "x..1a" would be an invalid name).
  while (prefix.size() < involved_name.size() && !prefix.empty() &&
         (prefix.back() == '.' || prefix.back() == '-')) {
    prefix.pop_back();
  }
  return prefix + "." + std::string(hex, static_cast<std::size_t>(n));
}

void EventCorrelator::forget(const std::string& uid) {
  if (uid.empty()) return;
  std::erase_if(events_, [&](const auto& entry) { return entry.second.event.involved.uid == uid; });
  // The similar-Event key holds the uid between separators (similar_key).
  const std::string part = '\x1f' + uid + '\x1f';
  std::erase_if(similar_,
                [&](const auto& entry) { return entry.first.find(part) != std::string::npos; });
  spam_.forget(uid);
  repeats_.forget(uid);
}

}  // namespace ctrl
