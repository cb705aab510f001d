// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ctrl/base/clock.h"
#include "ctrl/events/event.h"
#include "ctrl/events/event_spam_filter.h"

namespace ctrl {

// What to write for one occurrence of an Event.
struct EventWrite {
  enum class Action {
    create,  // POST a new Event
    patch,   // PATCH count, lastTimestamp and message of the existing Event `event.name`
    drop,    // over the object's rate limit: write nothing
  };

  EventWrite() = default;

  Action action = Action::drop;
  EventRecord event;  // the whole Event as it should now be on the server (empty for drop)
};

// Windows and limits of EventCorrelator.
struct EventCorrelatorOptions {
  // Not an aggregate: GCC 12 co_await temporaries (kube/list_options.h).
  EventCorrelatorOptions() = default;

  Clock::Duration window = std::chrono::minutes(10);  // client-go maxIntervalInSeconds
  std::size_t max_events = 4096;                      // client-go maxLruCacheEntries
  // client-go defaultAggregateMaxEvents: the 10th different message with the same object, type
  // and reason within `window` of the previous one goes into one combined Event.
  std::size_t max_similar = 10;
  EventSpamFilterOptions spam;
};

// The message prefix of a combined Event (client-go's EventAggregatorByReasonMessageFunc).
inline constexpr std::string_view kCombinedPrefix = "(combined from similar events): ";

// The I/O-free half of the recorder, client-go's EventCorrelator:
//  1. EventAggregator: occurrences with the same involved object, type and reason (the source is
//     the recorder's own) but different messages are counted; from the max_similar-th different
//     message within the window on, each becomes the one combined Event "(combined from similar
//     events): <latest message>".
//  2. EventLogger: an Event seen again within the window (the same message, or the combined Event)
//     becomes a PATCH of the existing Event with count+1 and the latest message, not a new Event.
//  3. The spam filter, with one deliberate change: a new Event and a repeat of an existing one
//     draw on separate per-object budgets (each client-go's 25 burst, 1 per 5 minutes). In
//     client-go every occurrence takes from one budget, so a retried error with a varying message
//     empties it and the object's next Created or OwnershipConflict is dropped; here a failure
//     storm costs at most max_similar new Events, and repeats stay bounded too.
// Time comes from the injected clock; windows are measured from the last occurrence, as client-go
// measures them.
class EventCorrelator {
 public:
  using Options = EventCorrelatorOptions;

  explicit EventCorrelator(const Clock& clock, Options options = {});

  // Decides what one occurrence writes. `message` is cut to kMaxEventMessageBytes first, so two
  // messages differing only past the limit count as repeats.
  EventWrite observe(const ObjectReference& involved, EventType type, std::string reason,
                     std::string message);

  // Forgets every Event about the object with this uid and its spam bucket: it was deleted, and a
  // uid never comes back. client-go keeps such entries until its 4096-entry LRU evicts them, so
  // memory grows with every object ever seen; this keeps it to the live ones.
  void forget(const std::string& uid);

  // Drops every entry that no longer changes a decision: Events and groups of similar Events last
  // seen more than the window ago (the next occurrence starts afresh either way) and spam buckets
  // full again. client-go keeps them until its LRUs evict them; here the caches follow the recent
  // Events, so an operator at rest keeps none. Returns how many entries went.
  std::size_t expire();
  bool empty() const {
    return events_.empty() && similar_.empty() && spam_.tracked_objects() == 0 &&
           repeats_.tracked_objects() == 0;
  }

  std::size_t cached_events() const { return events_.size(); }
  std::size_t tracked_objects() const { return spam_.tracked_objects(); }

 private:
  // What identifies one Event in the repeat cache: the involved object, type, and the hashes of
  // the reason and the message. client-go keys on the whole text; 40 bytes and no allocation
  // here. Two reasons or messages of one object whose 64-bit hashes collide only count as
  // repeats of each other (the patch still carries the latest message).
  struct EventKey {
    ObjectId object;
    std::uint64_t reason = 0;
    std::uint64_t message = 0;  // 0 for the combined Event of the group
    EventType type = EventType::normal;
    bool combined = false;
    bool operator==(const EventKey&) const = default;
  };
  // A group of similar Events: the involved object, type and reason.
  struct GroupKey {
    ObjectId object;
    std::uint64_t reason = 0;
    EventType type = EventType::normal;
    bool operator==(const GroupKey&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const EventKey& k) const noexcept;
    std::size_t operator()(const GroupKey& k) const noexcept;
  };
  // Only what the Event's next patch needs that the next occurrence does not bring: the rest
  // (involved object, type, reason, message) comes with it.
  struct Entry {
    std::int64_t suffix = 0;  // the name is "<involved name>.<hex suffix>" (event_name)
    std::int32_t count = 1;
    Clock::WallTime first_timestamp;
    Clock::TimePoint last_seen;  // monotonic: the window must not move with wall-clock jumps
  };
  struct Similar {
    // Hashes of the distinct messages (client-go keeps the messages), at most max_similar - 1.
    std::vector<std::uint64_t> messages;
    Clock::TimePoint last_seen;
  };

  std::int64_t next_suffix();

  const Clock& clock_;
  Options options_;
  EventSpamFilter spam_;     // new Events
  EventSpamFilter repeats_;  // patches of an existing Event
  std::unordered_map<EventKey, Entry, KeyHash> events_;
  std::unordered_map<GroupKey, Similar, KeyHash> similar_;
  std::int64_t last_suffix_ = 0;
};

}  // namespace ctrl
