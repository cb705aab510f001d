// SPDX-License-Identifier: Apache-2.0
#include "ctrl/cache/informer_state.h"

#include <glog/logging.h>

#include <utility>

#include "ctrl/base/overloaded.h"
#include "ctrl/object/object_meta.h"

namespace ctrl::informer {
namespace {

Step list(State state) {
  state.phase = Phase::listing;
  state.continue_token.clear();
  state.pending.clear();
  state.full_list = false;
  DoList next{{}, state.list_resource_version, true};
  return {std::move(state), {}, std::move(next)};
}

// A streaming list always asks for a consistent snapshot (resourceVersion ""), as client-go does
// for its first one and after a 410: served from the watch cache once it has caught up with etcd.
Step relist(State state) {
  if (!state.stream_lists) return list(std::move(state));
  state.phase = Phase::streaming;
  state.continue_token.clear();
  state.pending.clear();
  state.full_list = false;
  Step next{std::move(state), {}, DoWatch{{}, true}};
  next.staging = Staging::drop;  // start from an empty staging store
  return next;
}

// The server will not stream this list: refused the parameters (an API server before 1.27, or
// with the WatchList gate off, answers 422 or 400), or ignored them (a plain watch: a bookmark
// without the initial-events-end annotation, or a watch closed at once). List instead, now.
Step fall_back_to_list(State state, std::string why) {
  auto next = list(std::move(state));
  next.fell_back = std::move(why);
  next.staging = Staging::drop;
  return next;
}

// Failures the server would answer a list with too: retry the stream after the backoff.
bool stream_worth_retrying(const kube::ApiError& error) {
  return error.is(kube::Errc::gone) || error.is(kube::Errc::too_many_requests) ||
         error.is(kube::Errc::unavailable) || error.is(kube::Errc::timeout) ||
         error.is(kube::Errc::internal) || error.is(kube::Errc::unauthorized);
}

// One event of a streaming list's initial events, for the staging store. Only ADDED is
// expected; the others are kept correct anyway (client-go applies them to its temporary store).
Step gather(State state, kube::WatchEvent& ev) {
  Step next{std::move(state), {}, KeepReading{}};
  if (ev.type == kube::WatchEvent::Type::deleted) {
    next.staged.emplace_back(Delete{std::move(ev.object)});
  } else {
    next.staged.emplace_back(Upsert{std::move(ev.object)});
  }
  return next;
}

// The streaming list ends without completing: its staging store is discarded.
Step drop_staging(Step step) {
  step.staging = Staging::drop;
  return step;
}

Step back_off(State state, bool relist, const kube::ApiError& error) {
  state.phase = Phase::backing_off;
  state.relist_after_backoff = relist;
  state.continue_token.clear();
  state.pending.clear();
  state.full_list = false;
  return {std::move(state), {}, DoBackoff{error.retry_after, error.describe()}};
}

// The resourceVersion we know is too old for the server: only a quorum read moves forward from
// here (client-go's isLastSyncResourceVersionUnavailable).
Step relist_after_gone(State state, const kube::ApiError& error) {
  state.list_resource_version.clear();
  return back_off(std::move(state), true, error);
}

// Braced initialisers run left to right: take the resourceVersion before the state is moved.
Step rewatch(State state) {
  state.phase = Phase::listed;
  DoWatch next{state.resource_version};
  return {std::move(state), {}, std::move(next)};
}

void expect(const State& state, Phase phase, const char* input) {
  CHECK(state.phase == phase) << "informer: " << input << " in phase " << to_string(state.phase);
}

}  // namespace

void observe_resource_version(State& state, const std::string& resource_version) {
  if (resource_version.empty()) return;
  const auto seen = resource_version_number(state.newest_resource_version);
  const auto now = resource_version_number(resource_version);
  if (seen && now && *now <= *seen) return;
  state.newest_resource_version = resource_version;
}

bool is_current(const State& state) {
  if (!state.synced) return false;
  switch (state.phase) {
    case Phase::listed:
    case Phase::watching:
      return true;
    case Phase::backing_off:
      return !state.relist_after_backoff;
    case Phase::empty:
    case Phase::listing:
    case Phase::streaming:
      return false;
  }
  return false;
}

const char* to_string(Phase phase) {
  switch (phase) {
    case Phase::empty:
      return "empty";
    case Phase::listing:
      return "listing";
    case Phase::streaming:
      return "streaming";
    case Phase::listed:
      return "listed";
    case Phase::watching:
      return "watching";
    case Phase::backing_off:
      return "backing_off";
  }
  return "unknown";
}

Step step(State state, Input input) {
  return std::visit(
      Overloaded{
          [&](Start&) { return relist(std::move(state)); },
          [&](ListPage& page) -> Step {
            expect(state, Phase::listing, "list page");
            for (auto& item : page.items) state.pending.push_back(std::move(item));
            if (!page.continue_token.empty()) {
              state.continue_token = page.continue_token;
              return {std::move(state), {}, DoList{page.continue_token, {}, true}};
            }
            // The whole snapshot at once, so readers never see a half-listed cache.
            std::vector<StoreOp> ops{Replace{std::move(state.pending)}};
            state.pending.clear();
            state.continue_token.clear();
            state.full_list = false;
            state.resource_version = page.resource_version;
            observe_resource_version(state, page.resource_version);
            state.phase = Phase::listed;
            state.synced = true;
            return {std::move(state), std::move(ops), DoWatch{page.resource_version}};
          },
          [&](ListFailed& failed) -> Step {
            expect(state, Phase::listing, "list failure");
            // An expired continue token: the snapshot the pages came from is compacted away.
            // Another paginated list could expire again on a large, busy collection, so, as
            // client-go's pager (FullListIfExpired), ask once for everything in one response.
            if (failed.error.is(kube::Errc::gone) && !state.continue_token.empty() &&
                !state.full_list) {
              state.continue_token.clear();
              state.pending.clear();
              state.full_list = true;
              DoList next{{}, state.list_resource_version, false};
              return {std::move(state), {}, std::move(next)};
            }
            if (failed.error.is(kube::Errc::gone)) {
              return relist_after_gone(std::move(state), failed.error);
            }
            // Over the client's response cap: the watch cache answers resourceVersion "0" whole,
            // whatever the limit, so list from etcd, which pages (page_size objects at most).
            if (failed.error.is(kube::Errc::response_too_large)) {
              state.list_resource_version.clear();
            }
            return back_off(std::move(state), true, failed.error);
          },
          [&](WatchOpened&) -> Step {
            if (state.phase == Phase::streaming) return {std::move(state), {}, KeepReading{}};
            expect(state, Phase::listed, "watch opened");
            state.phase = Phase::watching;
            return {std::move(state), {}, KeepReading{}};
          },
          [&](Event& in) -> Step {
            auto& ev = in.event;
            if (ev.type == kube::WatchEvent::Type::error) {
              kube::ApiError error = ev.error ? *ev.error : kube::ApiError{};
              if (!ev.error) error.code = kube::Errc::unknown;
              return step(std::move(state), WatchFailed{std::move(error)});
            }
            if (state.phase == Phase::streaming) {
              if (ev.type != kube::WatchEvent::Type::bookmark) return gather(std::move(state), ev);
              if (!ev.initial_events_end) {
                return fall_back_to_list(std::move(state),
                                         "a bookmark before the initial events end");
              }
              // The list is complete at the bookmark's resourceVersion; the stream goes on.
              state.resource_version = ev.resource_version;
              observe_resource_version(state, ev.resource_version);
              state.phase = Phase::watching;
              state.synced = true;
              Step next{std::move(state), {}, KeepReading{}};
              next.staging = Staging::commit;
              return next;
            }
            expect(state, Phase::watching, "watch event");
            if (!ev.resource_version.empty()) state.resource_version = ev.resource_version;
            observe_resource_version(state, ev.resource_version);
            std::vector<StoreOp> ops;
            switch (ev.type) {
              case kube::WatchEvent::Type::added:
              case kube::WatchEvent::Type::modified:
                ops.emplace_back(Upsert{std::move(ev.object)});
                break;
              case kube::WatchEvent::Type::deleted:
                ops.emplace_back(Delete{std::move(ev.object)});
                break;
              case kube::WatchEvent::Type::bookmark:  // only advances the resourceVersion
              case kube::WatchEvent::Type::error:
                break;
            }
            return {std::move(state), std::move(ops), KeepReading{}};
          },
          [&](WatchEnded& ended) -> Step {
            const bool short_and_empty = ended.elapsed < kShortWatch && ended.events == 0;
            kube::ApiError error;
            error.code = kube::Errc::unavailable;
            error.message = "watch closed after " + std::to_string(ended.elapsed.count()) +
                            " ms with no events";
            if (state.phase == Phase::streaming) {
              if (short_and_empty) return fall_back_to_list(std::move(state), error.message);
              error.message = "watch closed after " + std::to_string(ended.events) +
                              " events, before the initial events ended";
              return drop_staging(back_off(std::move(state), true, error));
            }
            CHECK(state.phase == Phase::watching || state.phase == Phase::listed)
                << "informer: watch end in phase " << to_string(state.phase);
            if (short_and_empty) return back_off(std::move(state), false, error);
            return rewatch(std::move(state));
          },
          [&](WatchFailed& failed) -> Step {
            if (state.phase == Phase::streaming) {
              if (failed.error.is(kube::Errc::gone)) {
                return drop_staging(relist_after_gone(std::move(state), failed.error));
              }
              if (stream_worth_retrying(failed.error)) {
                return drop_staging(back_off(std::move(state), true, failed.error));
              }
              return fall_back_to_list(std::move(state), failed.error.describe());
            }
            CHECK(state.phase == Phase::watching || state.phase == Phase::listed)
                << "informer: watch failure in phase " << to_string(state.phase);
            // Too old a resourceVersion (HTTP 410 or an ERROR event): only a relist recovers. It
            // waits for the backoff first, as the reflector's BackoffUntil does, so a server that
            // answers every watch with 410 cannot make us list in a loop.
            if (failed.error.is(kube::Errc::gone)) {
              return relist_after_gone(std::move(state), failed.error);
            }
            // Anything else (refused, reset, 429, 5xx, idle timeout): wait, then continue the
            // watch where it stopped, so no event is lost and nothing is listed again.
            return back_off(std::move(state), false, failed.error);
          },
          [&](BackoffDone&) -> Step {
            expect(state, Phase::backing_off, "backoff done");
            if (state.relist_after_backoff || state.resource_version.empty()) {
              return relist(std::move(state));
            }
            return rewatch(std::move(state));
          },
      },
      input);
}

}  // namespace ctrl::informer
