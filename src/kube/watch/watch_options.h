// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>

namespace kube {

// Query parameters of a watch, and how long a silent connection is tolerated.
struct WatchOptions {
  // Not an aggregate: see ListOptions (GCC 12 co_await temporaries).
  WatchOptions() = default;

  std::string resource_version;  // from the list, or the last event seen; empty: "now"
  int timeout_seconds = 0;       // server ends the watch cleanly after this; 0: not sent
  bool allow_watch_bookmarks = true;
  // A streaming list (WatchList, KEP-3157): the server first sends every current object as ADDED,
  // then a BOOKMARK annotated k8s.io/initial-events-end, then changes as any watch does. Sent with
  // resourceVersionMatch=NotOlderThan, as client-go's reflector does; resource_version "" asks for
  // a consistent (most recent) snapshot.
  bool send_initial_events = false;
  std::string label_selector;
  std::string field_selector;
  // Every read must complete within this, or the watch fails with Errc::timeout (a half-open
  // connection). 0: WatchStream::idle_timeout_for (90 s with bookmarks).
  std::chrono::milliseconds idle_timeout{0};
};

}  // namespace kube
