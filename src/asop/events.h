// SPDX-License-Identifier: Apache-2.0
#pragma once

// Public API (docs/library.md): Events that `kubectl describe` shows. A reconciler records them
// through the EventRecorder App::events() returns; recording never blocks and never fails.

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "asop/kind.h"

namespace asop {

// core/v1 Event.type.
enum class EventType { normal, warning };
std::string_view to_string(EventType type);  // "Normal", "Warning"

// The object an Event is about (core/v1 ObjectReference). `kubectl describe` finds Events with a
// field selector on involvedObject {kind, name, namespace, uid}, so uid must be the object's
// current uid or the Events stay hidden.
struct ObjectReference {
  // Not an aggregate: GCC 12 co_await temporaries.
  ObjectReference() = default;
  ObjectReference(std::string api_version, std::string kind, std::string ns, std::string name,
                  std::string uid);

  std::string api_version;  // "v1", "apps/v1"
  std::string kind;
  std::string ns;  // empty for cluster-scoped objects
  std::string name;
  std::string uid;
  std::optional<std::string> resource_version;
};

// The reference to `object`, an object of `kind` (its namespace, name and uid): what an Event
// about it names. The kind comes from the caller because list items carry none.
ObjectReference reference_to(const Kind& kind, const rapidjson::Value& object);

// Writes core/v1 Events, like client-go's record.EventRecorder: similar Events are aggregated,
// exact repeats become a count, and a burst about one object is rate-limited. Single-threaded:
// call it on the event loop (from a reconcile).
class EventRecorder {
 public:
  virtual ~EventRecorder() = default;

  // Queues an Event about `involved` in its namespace. `reason` is a stable CamelCase word
  // ("Created", "InvalidSpec"); `message` is for humans and is cut to 1 kB.
  virtual void record(const ObjectReference& involved, EventType type, std::string reason,
                      std::string message) = 0;
  // The same about `object`, an object of `kind`.
  void record(const Kind& kind, const rapidjson::Value& object, EventType type, std::string reason,
              std::string message) {
    record(reference_to(kind, object), type, std::move(reason), std::move(message));
  }

 protected:
  EventRecorder() = default;
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;
};

}  // namespace asop
