// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/kube/watch/: watch streams: newline-delimited JSON framing independent of chunks, watch
// events, watch options. May use: src/kube/http/, src/kube/core/ (the Rooms table in
// docs/architecture.md).

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "kube/core/resource_path.h"
#include "kube/core/result.h"
#include "kube/core/url_query.h"
#include "kube/http/http_stream.h"
#include "kube/http/http_transport.h"
#include "kube/watch/watch_decoder.h"
#include "kube/watch/watch_event.h"
#include "kube/watch/watch_options.h"

namespace kube {

// One watch request: GET collection?watch=1&..., its chunked body decoded into WatchEvents. Pull
// style, for the informer's driver coroutine:
//
//   auto w = co_await WatchStream::open(transport, path, opts);   // HTTP 410 -> Errc::gone
//   for (;;) {
//     auto ev = co_await (*w)->next();
//     if (!ev) ...           // failure: transport, idle timeout, bad line, or an ERROR event
//     else if (!*ev) ...     // the server ended the watch cleanly: re-watch from the last RV
//     else ...               // ADDED / MODIFIED / DELETED / BOOKMARK
//   }
//
// An ERROR event is returned as its Status' ApiError (code 410 / Expired is Errc::gone, exactly as
// an HTTP 410 on open), so the caller handles "relist" in one place.
class WatchStream {
 public:
  static boost::asio::awaitable<Result<std::unique_ptr<WatchStream>>> open(
      HttpTransport& transport, const ResourcePath& collection, WatchOptions options);

  // The next event; nullopt once the body ended cleanly. After a failure, returns that failure
  // again. Must not be called again before the previous call completed.
  boost::asio::awaitable<Result<std::optional<WatchEvent>>> next();

  // For shutdown: a pending next() completes with an error promptly. The stream must outlive
  // that pending call.
  void cancel();
  bool cancelled() const { return stream_->cancelled(); }

  // The resourceVersion of the last event (or bookmark) returned, else the one the watch started
  // from: where a re-watch continues.
  const std::string& resource_version() const { return resource_version_; }
  std::uint64_t events() const { return events_; }

  // The query a watch sends (watch=1, resourceVersion, timeoutSeconds, allowWatchBookmarks,
  // selectors).
  static UrlQuery query(const WatchOptions& options);
  // How long a read may wait for data before the watch fails with Errc::timeout:
  // options.idle_timeout if set; else 90 s when bookmarks are allowed (a minute between bookmarks
  // plus a margin), and never more than timeoutSeconds + 30 s (5 min without timeoutSeconds).
  static std::chrono::milliseconds idle_timeout_for(const WatchOptions& options);

 private:
  WatchStream(std::unique_ptr<HttpStream> stream, WatchOptions options, std::string description);
  void take(std::vector<WatchDecoder::Item> items);
  Result<std::optional<WatchEvent>> fail(ApiError error);

  std::unique_ptr<HttpStream> stream_;
  WatchOptions options_;
  std::string description_;
  std::chrono::milliseconds idle_timeout_;
  WatchDecoder decoder_;
  std::deque<WatchDecoder::Item> pending_;
  std::optional<ApiError> failure_;
  bool ended_ = false;
  std::string resource_version_;
  std::uint64_t events_ = 0;
};

}  // namespace kube
