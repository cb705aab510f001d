// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/ctrl/cache/: informers: the list+watch state machine and its driver, the object store
// and its text codec. May use: src/asop/, src/ctrl/base/, src/ctrl/object/, src/kube/api/,
// src/kube/watch/, src/kube/core/ (the Rooms table in docs/architecture.md).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "asop/cache.h"
#include "ctrl/base/backoff.h"
#include "ctrl/base/clock.h"
#include "ctrl/cache/informer_state.h"
#include "ctrl/cache/object_store.h"
#include "kube/api/rest_client.h"
#include "kube/core/resource_path.h"
#include "kube/watch/watch_stream.h"

namespace ctrl {

// Keeps an ObjectStore in step with one resource on the API server: the I/O half of the
// list+watch state machine in informer_state.h. Handlers see every change after the store
// applied it; they only enqueue keys (never block, never call the API).
class Informer final : public asop::Informer {
 public:
  struct Options {
    Options() = default;  // not an aggregate: GCC 12 co_await temporaries (see kube/list_options.h)

    kube::ResourcePath collection;  // with a namespace to watch one namespace only
    std::string label_selector;
    std::string field_selector;
    std::int64_t page_size = 500;
    // Each watch asks the server to end it after a random time in this range, so watches of many
    // clients do not all restart at once (client-go's reflector: 5..10 min).
    std::chrono::seconds min_watch_timeout{300};
    std::chrono::seconds max_watch_timeout{600};
    // Applied to every object the server sends (list items; ADDED, MODIFIED and DELETED watch
    // objects) before it is cached or handed to a handler, like client-go's SetTransform: to keep
    // only what readers need. It runs on the event loop, must not throw, and must keep the
    // metadata the store works with (namespace, name, resourceVersion, uid, ownerReferences). It
    // may replace the whole document; to give memory back, build a smaller one and swap it in
    // (RapidJSON's pool allocator frees nothing on RemoveMember). Unset: strip_managed_fields.
    std::function<void(rapidjson::Document&)> transform;
    // Delay between failed lists or watches (client-go's reflector: 0.8 s doubling to 30 s,
    // jittered, reset after 2 min without a failure). Tests shorten it.
    Backoff::Options backoff;
    // A watch silent this long is presumed dead and re-opened at once. 0: the stream's default
    // (kube::WatchStream::idle_timeout_for: 90 s, as the server sends a bookmark every minute).
    std::chrono::milliseconds watch_idle_timeout{0};
    // Lists stream through a watch (sendInitialEvents, client-go's WatchListClient), so no list
    // body is held whole; falls back to paginated lists when the server does not serve them.
    bool stream_lists = false;
  };
  using Handler = asop::Informer::Handler;

  Informer(boost::asio::any_io_executor ex, std::shared_ptr<kube::RestClient> client,
           Options options, const Clock& clock, Random& random);

  void add_handler(Handler handler) override { handlers_.push_back(std::move(handler)); }
  const ObjectStore& store() const override { return store_; }
  // True once the first full list is in (it stays true: the store is never emptied).
  bool has_synced() const { return store_.has_synced(); }
  // True while the store is complete and kept current; false before the first list and while
  // relisting (after a 410). For readiness.
  bool is_current() const { return current_; }
  // Full lists delivered so far: 1 after the initial sync, more after each relist (410).
  std::uint64_t lists_completed() const { return lists_completed_; }
  // The newest resourceVersion the store reflects: the last list's, then every watch event's and
  // bookmark's, never moving back (informer::State::newest_resource_version). Empty before the
  // first list. A write that returned resourceVersion R is in the store once this is >= R
  // (KEP-5647; WriteTracker compares the two).
  const std::string& newest_resource_version() const { return newest_resource_version_; }
  // "apps/v1 deployments" for logs.
  const std::string& name() const override { return name_; }
  // What it lists and watches (collection, selectors).
  const Options& options() const { return options_; }

  // Lists and watches until stop(). Never throws on API or network failures: it backs off and
  // tries again.
  boost::asio::awaitable<void> run();
  // Ends run() promptly: cancels the pending watch read or backoff wait.
  void stop();

 private:
  boost::asio::awaitable<informer::Input> list_page(informer::DoList what);
  boost::asio::awaitable<informer::Input> open_watch(informer::DoWatch what);
  boost::asio::awaitable<informer::Input> read_event();
  boost::asio::awaitable<informer::Input> back_off(informer::DoBackoff what);
  void apply(informer::Step& step);
  void transform(rapidjson::Document& object) const;

  boost::asio::any_io_executor ex_;
  std::shared_ptr<kube::RestClient> client_;
  Options options_;
  const Clock& clock_;
  Random& random_;
  Backoff backoff_;
  std::string name_;
  ObjectStore store_;
  ObjectStore staging_;  // a streaming list's objects until it completes (informer::Staging)
  std::vector<Handler> handlers_;
  informer::State state_;
  std::unique_ptr<kube::WatchStream> watch_;
  Clock::TimePoint watch_opened_{};
  std::unique_ptr<boost::asio::steady_timer> timer_;
  std::uint64_t lists_completed_ = 0;
  std::string newest_resource_version_;  // of state_, kept while state_ is inside step()
  bool current_ = false;   // informer::is_current(state_), kept while state_ is inside step()
  bool streamed_ = false;  // the last list was a streaming one (for the log)
  bool stopping_ = false;
};

}  // namespace ctrl
