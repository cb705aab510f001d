#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "ctrl/clock.h"
#include "ctrl/event.h"
#include "ctrl/event_spam_filter.h"

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
  EventSpamFilterOptions spam;
};

// The I/O-free half of the recorder, client-go's EventCorrelator minus the similar-message
// aggregation: the spam filter first, then the EventLogger cache that turns an exact repeat (same
// involved uid, type, reason and message) seen again within the window into a PATCH of the same
// Event with count+1 instead of a new Event. Time comes from the injected clock; the window is
// measured from the last occurrence, as client-go's aggregator measures it.
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

  std::size_t cached_events() const { return events_.size(); }
  std::size_t tracked_objects() const { return spam_.tracked_objects(); }

 private:
  struct Entry {
    EventRecord event;
    Clock::TimePoint last_seen;  // monotonic: the window must not move with wall-clock jumps
  };

  std::string unique_name(const std::string& involved_name);
  void evict_oldest();

  const Clock& clock_;
  Options options_;
  EventSpamFilter spam_;
  std::unordered_map<std::string, Entry> events_;
  std::int64_t last_suffix_ = 0;
};

}  // namespace ctrl
