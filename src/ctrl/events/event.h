// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "asop/events.h"
#include "ctrl/base/clock.h"

namespace ctrl {

// The Event vocabulary is public (asop/events.h).
using asop::EventType;
using asop::ObjectReference;
using asop::reference_to;
using asop::to_string;

// The most a message may hold; longer ones are cut at a UTF-8 character boundary (the events.k8s.io
// API refuses notes over 1 kB, and a describe line should stay readable).
inline constexpr std::size_t kMaxEventMessageBytes = 1024;

// `text` with invalid UTF-8 bytes replaced by '?' and cut at a character boundary to at most
// `max_bytes`.
std::string truncate_utf8(std::string_view text, std::size_t max_bytes);

// metav1.Time on the wire: RFC 3339 in UTC, whole seconds, "2024-01-01T00:00:00Z" (truncated toward
// the past, as Go's formatting does).
std::string format_event_time(Clock::WallTime t);

// One Event as the recorder last decided it should look on the server.
struct EventRecord {
  EventRecord() = default;

  std::string name;  // "<involved name>.<hex nanoseconds>"
  std::string ns;    // the involved object's namespace, "default" for cluster-scoped objects
  ObjectReference involved;
  EventType type = EventType::normal;
  std::string reason;
  std::string message;
  std::int32_t count = 1;
  Clock::WallTime first_timestamp;
  Clock::WallTime last_timestamp;
};

// Who writes Events: source.component and reportingComponent, and reportingInstance.
struct EventSource {
  EventSource() = default;
  EventSource(std::string c, std::string i) : component(std::move(c)), instance(std::move(i)) {}

  std::string component;  // e.g. "appservice-operator"
  std::string instance;   // host or identity of this replica
};

// The POST body creating `event` (core/v1 style: eventTime left out, first/lastTimestamp and count
// set).
std::string event_create_body(const EventRecord& event, const EventSource& source);
// The strategic merge patch client-go sends for a repeat: count, lastTimestamp and message.
std::string event_patch_body(const EventRecord& event);

}  // namespace ctrl
