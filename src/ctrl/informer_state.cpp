#include "ctrl/informer_state.h"

#include <glog/logging.h>

#include <utility>

#include "ctrl/overloaded.h"

namespace ctrl::informer {
namespace {

Step relist(State state, std::vector<StoreOp> ops = {}) {
  state.phase = Phase::listing;
  state.continue_token.clear();
  state.pending.clear();
  return {std::move(state), std::move(ops), DoList{}};
}

Step back_off(State state, bool relist, const kube::ApiError& error) {
  state.phase = Phase::backing_off;
  state.relist_after_backoff = relist;
  state.continue_token.clear();
  state.pending.clear();
  return {std::move(state), {}, DoBackoff{error.retry_after, error.describe()}};
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

const char* to_string(Phase phase) {
  switch (phase) {
    case Phase::empty:
      return "empty";
    case Phase::listing:
      return "listing";
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
              return {std::move(state), {}, DoList{page.continue_token}};
            }
            // The whole snapshot at once, so readers never see a half-listed cache.
            std::vector<StoreOp> ops{Replace{std::move(state.pending)}};
            state.pending.clear();
            state.continue_token.clear();
            state.resource_version = page.resource_version;
            state.phase = Phase::listed;
            state.synced = true;
            return {std::move(state), std::move(ops), DoWatch{page.resource_version}};
          },
          [&](ListFailed& failed) -> Step {
            expect(state, Phase::listing, "list failure");
            // An expired continue token: the snapshot is gone, start a fresh list right away.
            if (failed.error.is(kube::Errc::gone) && !state.continue_token.empty()) {
              return relist(std::move(state));
            }
            return back_off(std::move(state), true, failed.error);
          },
          [&](WatchOpened&) -> Step {
            expect(state, Phase::listed, "watch opened");
            state.phase = Phase::watching;
            return {std::move(state), {}, KeepReading{}};
          },
          [&](Event& in) -> Step {
            expect(state, Phase::watching, "watch event");
            auto& ev = in.event;
            if (ev.type == kube::WatchEvent::Type::error) {
              kube::ApiError error = ev.error ? *ev.error : kube::ApiError{};
              if (!ev.error) error.code = kube::Errc::unknown;
              return step(std::move(state), WatchFailed{std::move(error)});
            }
            if (!ev.resource_version.empty()) state.resource_version = ev.resource_version;
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
            CHECK(state.phase == Phase::watching || state.phase == Phase::listed)
                << "informer: watch end in phase " << to_string(state.phase);
            if (ended.elapsed < kShortWatch && ended.events == 0) {
              kube::ApiError error;
              error.code = kube::Errc::unavailable;
              error.message = "watch closed after " + std::to_string(ended.elapsed.count()) +
                              " ms with no events";
              return back_off(std::move(state), false, error);
            }
            return rewatch(std::move(state));
          },
          [&](WatchFailed& failed) -> Step {
            CHECK(state.phase == Phase::watching || state.phase == Phase::listed)
                << "informer: watch failure in phase " << to_string(state.phase);
            // Too old a resourceVersion (HTTP 410 or an ERROR event): only a relist recovers.
            if (failed.error.is(kube::Errc::gone)) return relist(std::move(state));
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
