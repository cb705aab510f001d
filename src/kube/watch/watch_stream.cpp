// SPDX-License-Identifier: Apache-2.0
#include "kube/watch/watch_stream.h"

#include <glog/logging.h>

#include <algorithm>
#include <boost/beast/http/verb.hpp>
#include <variant>

namespace kube {

using boost::asio::awaitable;

namespace {

// An error response is a small Status; bound it in case a proxy answers with something else.
constexpr std::size_t kMaxErrorBodyBytes = 1 << 20;
constexpr std::chrono::seconds kIdleMargin{30};
constexpr std::chrono::minutes kIdleWithoutTimeout{5};
// kube-apiserver's watch cache sends each watcher that allows bookmarks a BOOKMARK about once a
// minute (defaultBookmarkFrequency in k8s.io/apiserver's cacher.go), so a healthy watch is never
// silent for longer. A stalled network or proxy still answers TCP keepalive: only this deadline
// notices it.
constexpr std::chrono::seconds kBookmarkInterval{60};

}  // namespace

std::chrono::milliseconds WatchStream::idle_timeout_for(const WatchOptions& options) {
  if (options.idle_timeout.count() > 0) return options.idle_timeout;
  std::chrono::milliseconds bound = kIdleWithoutTimeout;
  if (options.timeout_seconds > 0)
    bound = std::chrono::seconds(options.timeout_seconds) + kIdleMargin;
  if (options.allow_watch_bookmarks)
    bound = std::min<std::chrono::milliseconds>(bound, kBookmarkInterval + kIdleMargin);
  return bound;
}

UrlQuery WatchStream::query(const WatchOptions& options) {
  UrlQuery q;
  q.add("watch", "1");
  q.add_if("resourceVersion", options.resource_version);
  if (options.timeout_seconds > 0) q.add("timeoutSeconds", std::to_string(options.timeout_seconds));
  if (options.allow_watch_bookmarks) q.add("allowWatchBookmarks", "true");
  if (options.send_initial_events) {
    q.add("sendInitialEvents", "true");
    q.add("resourceVersionMatch", "NotOlderThan");
  }
  q.add_if("labelSelector", options.label_selector);
  q.add_if("fieldSelector", options.field_selector);
  return q;
}

WatchStream::WatchStream(std::unique_ptr<HttpStream> stream, WatchOptions options,
                         std::string description)
    : stream_(std::move(stream)),
      options_(std::move(options)),
      description_(std::move(description)),
      idle_timeout_(idle_timeout_for(options_)),
      resource_version_(options_.resource_version) {}

awaitable<Result<std::unique_ptr<WatchStream>>> WatchStream::open(HttpTransport& transport,
                                                                  const ResourcePath& collection,
                                                                  WatchOptions options) {
  if (auto refused = collection.refusal(ResourcePath::Target::collection, "watch")) {
    co_return std::move(*refused);
  }
  HttpRequest req;
  req.method = boost::beast::http::verb::get;
  req.target = request_target(collection, query(options));
  auto opened = co_await transport.open_stream(req);
  if (!opened) co_return std::move(opened).error();
  std::unique_ptr<HttpStream> stream = std::move(*opened);
  if (stream->status() != 200) {
    const std::string retry_after = stream->header("Retry-After");
    auto body = co_await stream->read_all(transport.options().request_timeout, kMaxErrorBodyBytes);
    co_return api_error_from_response(stream->status(), body ? *body : std::string(), retry_after);
  }
  VLOG(2) << "watching " << req.target;
  co_return std::unique_ptr<WatchStream>(
      new WatchStream(std::move(stream), std::move(options), "watch " + req.target));
}

void WatchStream::take(std::vector<WatchDecoder::Item> items) {
  for (auto& item : items) pending_.push_back(std::move(item));
}

Result<std::optional<WatchEvent>> WatchStream::fail(ApiError error) {
  // The connection is useless after a failure (and the server ends the body after an ERROR event).
  stream_->cancel();
  pending_.clear();
  failure_ = error;
  return error;
}

awaitable<Result<std::optional<WatchEvent>>> WatchStream::next() {
  for (;;) {
    if (failure_) co_return *failure_;
    if (!pending_.empty()) {
      WatchDecoder::Item item = std::move(pending_.front());
      pending_.pop_front();
      if (auto* bad = std::get_if<WatchDecodeError>(&item)) {
        // Skipping a line would silently lose an event; failing makes the caller re-watch from
        // the last good resourceVersion, as client-go does.
        ApiError err;
        err.code = make_error_code(Errc::unknown);
        err.message = description_ + ": undecodable event at line " + std::to_string(bad->line) +
                      ": " + bad->message;
        co_return fail(std::move(err));
      }
      WatchEvent ev = std::get<WatchEvent>(std::move(item));
      if (ev.type == WatchEvent::Type::error) {
        ApiError err =
            ev.error ? *ev.error
                     : api_error_from_status(ev.object ? *ev.object : rapidjson::Value().Move());
        VLOG(1) << description_ << ": ERROR event: " << err.describe();
        co_return fail(std::move(err));
      }
      if (!ev.resource_version.empty()) resource_version_ = ev.resource_version;
      ++events_;
      co_return std::optional<WatchEvent>(std::move(ev));
    }
    if (ended_) co_return std::optional<WatchEvent>();
    auto chunk = co_await stream_->read_some(idle_timeout_);
    if (!chunk) co_return fail(std::move(chunk).error());
    if (chunk->empty()) {
      ended_ = true;
      take(decoder_.finish());
      VLOG(2) << description_ << ": ended after " << events_ << " events";
    } else {
      take(decoder_.feed(*chunk));
    }
  }
}

void WatchStream::cancel() {
  stream_->cancel();
}

}  // namespace kube
