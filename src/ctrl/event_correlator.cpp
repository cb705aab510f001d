#include "ctrl/event_correlator.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace ctrl {

namespace {

// Event names are DNS subdomains at most 253 bytes long.
constexpr std::size_t kMaxNameBytes = 253;

// client-go's getEventKey: the involved object's identity, type, reason and message (not its
// resourceVersion, so a repeat across generations of the object still aggregates).
std::string event_key(const ObjectReference& o, EventType type, const std::string& reason,
                      const std::string& message) {
  std::string key;
  for (const std::string* part : {&o.api_version, &o.kind, &o.ns, &o.name, &o.uid, &reason}) {
    key += *part;
    key += '\x1f';
  }
  key += to_string(type);
  key += '\x1f';
  key += message;
  return key;
}

}  // namespace

EventCorrelator::EventCorrelator(const Clock& clock, Options options)
    : clock_(clock), options_(options), spam_(clock, options.spam) {
  CHECK_GT(options_.max_events, 0u);
}

EventWrite EventCorrelator::observe(const ObjectReference& involved, EventType type,
                                    std::string reason, std::string message) {
  EventWrite out;
  // Unlike client-go, the filter runs before the cache: a dropped occurrence leaves no trace, so
  // the cache never names an Event that was never sent (client-go recovers from that with the 404
  // fallback, which we also keep).
  if (!spam_.allow(involved)) return out;

  if (message.size() > kMaxEventMessageBytes) {
    message = truncate_utf8(message, kMaxEventMessageBytes);
  }
  const auto now = clock_.now();
  const auto wall = clock_.wall_now();
  std::string key = event_key(involved, type, reason, message);

  auto it = events_.find(key);
  if (it != events_.end() && now - it->second.last_seen <= options_.window) {
    Entry& e = it->second;
    e.last_seen = now;
    e.event.count += 1;
    e.event.last_timestamp = wall;
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
    if (events_.size() >= options_.max_events) evict_oldest();
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
  spam_.forget(uid);
}

// Drops the Event seen longest ago, like client-go's LRU; a later repeat of it starts a new Event.
void EventCorrelator::evict_oldest() {
  auto oldest = events_.begin();
  for (auto it = events_.begin(); it != events_.end(); ++it) {
    if (it->second.last_seen < oldest->second.last_seen) oldest = it;
  }
  if (oldest != events_.end()) events_.erase(oldest);
}

}  // namespace ctrl
