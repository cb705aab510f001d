// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "asop/object.h"
#include "kube/core/api_error.h"
#include "kube/watch/watch_event.h"

namespace ctrl {

// An object as the informer hands it around (public: asop/object.h).
using asop::ObjectPtr;

// The list+watch protocol of client-go's reflector as a pure state machine (kube-rs' watcher
// does the same): `step(state, input)` says what to do to the cache and which request comes
// next, and a driver coroutine does the I/O. Tests drive it with no sockets and no clock: the
// driver decides when (backoff, watch timeouts) and reports elapsed time in the inputs.
//
//   empty --Start--> listing{continue} --last page--> listed{rv} --WatchOpened--> watching{rv}
//   any failure --> backing_off --BackoffDone--> listing (relist) or listed (re-watch)
//
// With State::stream_lists, every (re)list is a streaming list instead (WatchList, client-go's
// default since v0.35): one watch with sendInitialEvents=true sends the current objects as ADDED
// events, and the bookmark annotated k8s.io/initial-events-end completes the list; the same
// stream then goes on as the watch, so no list body is ever held whole.
//
//   empty --Start--> streaming --initial-events-end bookmark (commit the staging)--> watching{rv}
//   streaming --refused (400/403/422...), or a bookmark without the annotation, or a watch that
//             closed at once with nothing--> listing (this relist only, as client-go falls back)
//   streaming --any other failure or an early end--> backing_off --> streaming
//
// Like client-go's reflector and pager: the first list asks for resourceVersion "0" (served from
// the API server's watch cache, not a quorum read of etcd); an expired continue token falls back
// to one unpaginated list (FullListIfExpired); a 410 makes every later list a quorum read ("")
// and relists only after the backoff, so nothing here can loop without waiting. A list response
// over the client's cap (Errc::response_too_large) backs off and then lists from etcd, paginated.
namespace informer {

enum class Phase { empty, listing, streaming, listed, watching, backing_off };

struct State {
  Phase phase = Phase::empty;
  std::string continue_token;        // listing: the next page
  std::vector<ObjectPtr> pending;    // listing: items of the pages so far
  std::string resource_version;      // listed/watching: where a watch (re)starts
  bool relist_after_backoff = true;  // backing_off: relist, or re-watch from resource_version
  bool synced = false;               // the first full list was delivered
  // The resourceVersion a fresh list asks for: "0" (any, from the watch cache) until the server
  // said 410, then "" (most recent, a quorum read) so the cache can only move forward.
  std::string list_resource_version = "0";
  bool full_list = false;  // listing: one unpaginated request after a continue token expired
  // Relists stream (set once by the driver); a refusal falls back to a list for that relist only.
  bool stream_lists = false;
  // The newest resourceVersion the cache reflects (KEP-5647's "last observed"): a completed
  // list's, each watch event's object's, each bookmark's. Only ever moves forward (compared as
  // the integers of KEP-5504), so a relist that answers from an older watch cache cannot step it
  // back; a streaming list's events count only once the list completes, as the store holds them
  // only then. A value that is not such an integer is kept as it came (readers fail open).
  std::string newest_resource_version;
};

// Moves state.newest_resource_version to `resource_version` if that is newer (or either is not
// an integer resourceVersion: the latest then wins, and readers fail open).
void observe_resource_version(State& state, const std::string& resource_version);

// True while the store holds a complete list that the informer keeps current: listed, watching,
// or waiting to resume a watch. False before the first list and while relisting (after a 410),
// when the store may miss changes; the manager's /readyz reports this.
bool is_current(const State& state);

// Inputs.
struct Start {};
struct ListPage {
  std::vector<ObjectPtr> items;
  std::string continue_token;    // empty on the last page
  std::string resource_version;  // the list's metadata.resourceVersion
};
struct ListFailed {
  kube::ApiError error;
};
struct WatchOpened {};
struct Event {
  kube::WatchEvent event;
};
// The server closed the watch body cleanly (its timeoutSeconds passed, or it restarted).
struct WatchEnded {
  std::chrono::milliseconds elapsed{0};
  std::uint64_t events = 0;
};
// The watch failed to open, broke, idled out, or delivered an ERROR event.
struct WatchFailed {
  kube::ApiError error;
};
struct BackoffDone {};
using Input = std::variant<Start, ListPage, ListFailed, WatchOpened, Event, WatchEnded, WatchFailed,
                           BackoffDone>;

// Changes to the cache.
struct Replace {  // a complete list: swap the whole store at once
  std::vector<ObjectPtr> items;
};
struct Upsert {
  ObjectPtr object;
};
struct Delete {
  ObjectPtr object;  // the last state the server sent
};
using StoreOp = std::variant<Replace, Upsert, Delete>;

// What the driver does next.
struct DoList {
  std::string continue_token;    // empty: first page of a fresh list
  std::string resource_version;  // first page only: "0" or "" (see State)
  bool paginate = true;          // false: the whole list in one response (limit=0)
};
struct DoWatch {
  std::string resource_version;
  // A streaming list: sendInitialEvents=true, resourceVersionMatch=NotOlderThan.
  bool send_initial_events = false;
};
struct DoBackoff {
  // Retry-After from a 429/503, a floor under the driver's exponential backoff.
  std::optional<std::chrono::seconds> at_least;
  std::string why;  // for the log line
};
struct KeepReading {};  // watching: read the next event
using Action = std::variant<DoList, DoWatch, DoBackoff, KeepReading>;

// A streaming list's objects are gathered in a staging store the driver keeps (deflated text,
// like the cache, as client-go's temporary store), not in State as DOMs: at N = 1,000 the DOMs
// held until the list ended made a restart peak at 1.3 times a first start.
enum class Staging { keep, commit, drop };

struct Step {
  State state;
  std::vector<StoreOp> ops;
  Action next;
  // Set when a streaming list was not served and this step lists instead: why, for the log.
  std::string fell_back = {};
  // Streaming: Upserts and Deletes for the staging store (not the cache), then what becomes of
  // it: `commit` swaps it in as a complete list (as a Replace would), `drop` discards it.
  std::vector<StoreOp> staged = {};
  Staging staging = Staging::keep;
};

// A watch that ends this quickly without events counts as a failure, as in client-go (it would
// otherwise spin against a server that closes every watch at once).
inline constexpr std::chrono::seconds kShortWatch{1};

Step step(State state, Input input);

const char* to_string(Phase phase);

}  // namespace informer
}  // namespace ctrl
