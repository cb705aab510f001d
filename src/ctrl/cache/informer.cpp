// SPDX-License-Identifier: Apache-2.0
#include "ctrl/cache/informer.h"

#include <glog/logging.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <utility>

#include "ctrl/base/free_heap.h"
#include "ctrl/base/overloaded.h"
#include "ctrl/object/compact_object.h"
#include "ctrl/object/object_meta.h"
#include "kube/api/list_split.h"

namespace ctrl {
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

// List items carry no apiVersion/kind on the wire; put them back from the list's own
// ("DeploymentList" -> "Deployment") so cached objects look like the ones a watch delivers. Each
// item is parsed from its own text, transformed, then copied out compactly: the page is never one
// DOM (at N = 1,000 the Deployments' page was 7 MB of DOM on top of its 8 MB of text).
std::vector<ObjectPtr> parse_items(const kube::ListText& list,
                                   const std::function<void(rapidjson::Document&)>& transform) {
  std::string kind = list.kind;
  if (kind.size() > 4 && kind.ends_with("List")) kind.resize(kind.size() - 4);
  std::vector<ObjectPtr> items;
  items.reserve(list.items.size());
  for (std::string_view text : list.items) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
    if (doc.HasParseError() || !doc.IsObject()) continue;  // split_list saw valid JSON
    auto& a = doc.GetAllocator();
    if (!doc.HasMember("kind") && !kind.empty())
      doc.AddMember("kind", rapidjson::Value(kind, a), a);
    if (!doc.HasMember("apiVersion") && !list.api_version.empty()) {
      doc.AddMember("apiVersion", rapidjson::Value(list.api_version, a), a);
    }
    transform(doc);
    items.push_back(compact_object(doc));
  }
  return items;
}

}  // namespace

Informer::Informer(asio::any_io_executor ex, std::shared_ptr<kube::RestClient> client,
                   Options options, const Clock& clock, Random& random)
    : ex_(std::move(ex)),
      client_(std::move(client)),
      options_(std::move(options)),
      clock_(clock),
      random_(random),
      backoff_(clock, random, options_.backoff),
      name_(options_.collection.api_version() + " " + options_.collection.resource) {
  state_.stream_lists = options_.stream_lists;
}

void Informer::transform(rapidjson::Document& object) const {
  if (options_.transform) {
    options_.transform(object);
  } else {
    strip_managed_fields(object);
  }
}

void Informer::apply(informer::Step& step) {
  bool listed = false;
  for (auto& op : step.staged) staging_.apply(std::move(op));
  if (step.staging == informer::Staging::commit) {
    ++lists_completed_;
    listed = true;
    store_.replace_from(staging_, [this](const StoreChange& change) {
      for (const auto& handler : handlers_) handler(change);
    });
  }
  if (step.staging != informer::Staging::keep) staging_ = ObjectStore();
  for (auto& op : step.ops) {
    if (std::holds_alternative<informer::Replace>(op)) {
      ++lists_completed_;
      listed = true;
    }
    for (const auto& change : store_.apply(std::move(op))) {
      for (const auto& handler : handlers_) handler(change);
    }
  }
  // A full list parsed pages of up to page_size objects that are all freed now; glibc keeps such
  // memory in the heap (it is not at the top, so it is never trimmed by itself) unless asked.
  if (listed) release_free_heap();
}

asio::awaitable<void> Informer::run() {
  auto result = informer::step(std::move(state_), informer::Start{});
  while (true) {
    const bool was_current = current_;
    const auto lists_before = lists_completed_;
    state_ = std::move(result.state);
    newest_resource_version_ = state_.newest_resource_version;
    if (!result.fell_back.empty()) {
      LOG(WARNING) << "informer=\"" << name_
                   << "\" streaming list not served, listing instead: " << result.fell_back;
    }
    apply(result);
    current_ = informer::is_current(state_);
    if (lists_completed_ > lists_before && lists_completed_ > 1) {
      LOG(INFO) << "informer=\"" << name_ << "\" relisted objects=" << store_.size()
                << " relists=" << lists_completed_ - 1
                << " via=" << (streamed_ ? "watch-list" : "list");
    }
    if (!was_current && current_) {
      LOG(INFO) << "informer=\"" << name_ << "\" synced objects=" << store_.size()
                << " lists=" << lists_completed_ << " via=" << (streamed_ ? "watch-list" : "list");
    } else if (was_current && !current_) {
      LOG(WARNING) << "informer=\"" << name_ << "\" not synced: relisting";
    }
    if (stopping_) break;
    auto input =
        co_await std::visit(Overloaded{
                                [&](informer::DoList& a) { return list_page(std::move(a)); },
                                [&](informer::DoWatch& a) { return open_watch(std::move(a)); },
                                [&](informer::KeepReading&) { return read_event(); },
                                [&](informer::DoBackoff& a) { return back_off(std::move(a)); },
                            },
                            result.next);
    if (stopping_) break;
    result = informer::step(std::move(state_), std::move(input));
  }
  watch_.reset();
}

void Informer::stop() {
  stopping_ = true;
  if (watch_) watch_->cancel();
  if (timer_) timer_->cancel();
}

asio::awaitable<informer::Input> Informer::list_page(informer::DoList what) {
  kube::ListOptions options;
  options.label_selector = options_.label_selector;
  options.field_selector = options_.field_selector;
  options.limit = what.paginate ? options_.page_size : 0;
  // Later pages are pinned to the first page's snapshot by the continue token.
  if (what.continue_token.empty()) options.resource_version = what.resource_version;
  options.continue_token = std::move(what.continue_token);
  streamed_ = false;
  if (!what.paginate) {
    LOG(WARNING) << "informer=\"" << name_
                 << "\" continue token expired mid-list: listing everything in one request";
  }
  auto response = co_await client_->list_text(options_.collection, options);
  auto list = response ? kube::split_list(*response, "list " + options_.collection.path())
                       : kube::Result<kube::ListText>(std::move(response).error());
  if (!list) {
    LOG(WARNING) << "informer=\"" << name_ << "\" list failed: " << list.error().describe();
    co_return informer::ListFailed{std::move(list).error()};
  }
  informer::ListPage page;
  page.items = parse_items(*list, [this](rapidjson::Document& d) { transform(d); });
  page.continue_token = std::move(list->continue_token);
  page.resource_version = std::move(list->resource_version);
  co_return page;
}

asio::awaitable<informer::Input> Informer::open_watch(informer::DoWatch what) {
  kube::WatchOptions options;
  options.resource_version = std::move(what.resource_version);
  options.send_initial_events = what.send_initial_events;
  if (what.send_initial_events) streamed_ = true;
  options.timeout_seconds = static_cast<int>(
      random_.int_between(options_.min_watch_timeout.count(), options_.max_watch_timeout.count()));
  options.allow_watch_bookmarks = true;
  options.label_selector = options_.label_selector;
  options.field_selector = options_.field_selector;
  options.idle_timeout = options_.watch_idle_timeout;
  auto stream =
      co_await kube::WatchStream::open(client_->transport(), options_.collection, options);
  if (!stream) {
    LOG(WARNING) << "informer=\"" << name_ << "\" watch failed: " << stream.error().describe();
    co_return informer::WatchFailed{std::move(stream).error()};
  }
  watch_ = std::move(stream).value();
  watch_opened_ = clock_.now();
  co_return informer::WatchOpened{};
}

asio::awaitable<informer::Input> Informer::read_event() {
  CHECK(watch_) << "informer: read without a watch";
  auto event = co_await watch_->next();
  if (!event && !stopping_ && event.error().is(kube::Errc::timeout)) {
    // Nothing arrived within the idle deadline, not even the bookmark due every minute: the
    // connection is presumed dead (a stalled network still answers TCP keepalive). Not a failure
    // of the server: re-watch from the last resourceVersion at once, on a new connection whose
    // connect, handshake and response deadlines (and their backoff) guard the next attempt.
    LOG(WARNING) << "informer=\"" << name_
                 << "\" watch idle, reconnecting: " << event.error().describe();
    informer::WatchEnded ended;
    ended.elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - watch_opened_);
    ended.events = watch_->events();
    watch_.reset();
    co_return ended;
  }
  if (!event) {
    if (!stopping_) {
      LOG(WARNING) << "informer=\"" << name_ << "\" watch ended: " << event.error().describe();
    }
    watch_.reset();
    co_return informer::WatchFailed{std::move(event).error()};
  }
  if (!*event) {
    auto elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - watch_opened_);
    informer::WatchEnded ended;
    ended.elapsed = elapsed;
    ended.events = watch_->events();
    VLOG(1) << "informer=\"" << name_ << "\" watch closed by the server after " << elapsed.count()
            << " ms, events=" << ended.events;
    watch_.reset();
    co_return ended;
  }
  auto ev = std::move(**event);
  // Not bookmarks (metadata.resourceVersion only) nor ERROR events (a Status).
  const bool carries_object = ev.type == kube::WatchEvent::Type::added ||
                              ev.type == kube::WatchEvent::Type::modified ||
                              ev.type == kube::WatchEvent::Type::deleted;
  if (ev.object && carries_object) {
    transform(*ev.object);
    // No compact copy: the store (or a streaming list's staging store) keeps the object as
    // text, and this parse is freed once it is stored and the handlers have seen it.
  }
  co_return informer::Event{std::move(ev)};
}

asio::awaitable<informer::Input> Informer::back_off(informer::DoBackoff what) {
  auto delay = backoff_.next();
  if (what.at_least) delay = std::max<Clock::Duration>(delay, *what.at_least);
  LOG(WARNING) << "informer=\"" << name_ << "\" retrying in "
               << std::chrono::duration_cast<std::chrono::milliseconds>(delay).count()
               << " ms after: " << what.why;
  timer_ = std::make_unique<asio::steady_timer>(ex_, delay);
  co_await timer_->async_wait(asio::as_tuple(asio::use_awaitable));
  timer_.reset();
  co_return informer::BackoffDone{};
}

}  // namespace ctrl
