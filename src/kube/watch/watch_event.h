// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kube/core/api_error.h"

namespace kube {

// One event of a watch stream (metav1.WatchEvent).
struct WatchEvent {
  enum class Type { added, modified, deleted, bookmark, error };

  Type type = Type::added;
  // The decoded "object" field: the resource for ADDED/MODIFIED/DELETED, a near-empty object of
  // the watched kind for BOOKMARK, a metav1.Status for ERROR. Shared so a cache can keep it without
  // a copy; never null for a decoded event.
  std::shared_ptr<rapidjson::Document> object;
  // object.metadata.resourceVersion, opaque; always set for BOOKMARK (the decoder rejects a
  // bookmark without one), usually empty for ERROR.
  std::string resource_version;
  // Filled for ERROR only, from the Status: code 410 / reason Expired is Errc::gone, exactly as an
  // HTTP 410 would be.
  std::optional<ApiError> error;
  // BOOKMARK only: annotated k8s.io/initial-events-end "true", the end of a streaming list's
  // initial events (WatchOptions::send_initial_events).
  bool initial_events_end = false;
};

// The annotation on the bookmark that ends a streaming list's initial events.
inline constexpr std::string_view kInitialEventsEndAnnotation = "k8s.io/initial-events-end";

// The wire name: "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR".
constexpr std::string_view to_string(WatchEvent::Type type) {
  switch (type) {
    case WatchEvent::Type::added:
      return "ADDED";
    case WatchEvent::Type::modified:
      return "MODIFIED";
    case WatchEvent::Type::deleted:
      return "DELETED";
    case WatchEvent::Type::bookmark:
      return "BOOKMARK";
    case WatchEvent::Type::error:
      return "ERROR";
  }
  return "UNKNOWN";
}

// The type for a wire name; nullopt for anything else (names are case-sensitive, as in Go).
constexpr std::optional<WatchEvent::Type> watch_event_type_from_string(std::string_view name) {
  for (const auto type :
       {WatchEvent::Type::added, WatchEvent::Type::modified, WatchEvent::Type::deleted,
        WatchEvent::Type::bookmark, WatchEvent::Type::error}) {
    if (to_string(type) == name) return type;
  }
  return std::nullopt;
}

}  // namespace kube
