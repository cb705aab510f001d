// SPDX-License-Identifier: Apache-2.0
#include "ctrl/events/event_recorder.h"

#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <climits>
#include <exception>
#include <utility>

#include "ctrl/base/exception_text.h"
#include "ctrl/base/free_heap.h"

namespace ctrl {
namespace asio = boost::asio;
using asio::awaitable;
using kube::Errc;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
constexpr auto kMaxRetryDelay = std::chrono::seconds(30);
const auto kEvents = kube::ResourcePath::from_api_version("v1", "events");

std::string hostname() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

// Failures that may pass if tried again; anything else is the server refusing this Event, which
// client-go never retries either.
bool retryable(const kube::ApiError& e) {
  return e.is(Errc::timeout) || e.is(Errc::unavailable) || e.is(Errc::too_many_requests) ||
         e.is(Errc::internal);
}

bool namespace_terminating(const kube::ApiError& e) {
  return std::any_of(e.causes.begin(), e.causes.end(),
                     [](const kube::StatusCause& c) { return c.type == "NamespaceTerminating"; });
}

// "Warning BackOff on ConfigMap ns/name": says which Event, never its message (it may quote
// user data at length).
std::string describe(const EventRecord& e) {
  std::string s{to_string(e.type)};
  s += ' ';
  s += e.reason;
  s += " on ";
  s += e.involved.kind;
  s += ' ';
  if (!e.involved.ns.empty()) s += e.involved.ns + "/";
  s += e.involved.name;
  return s;
}

}  // namespace

EventRecorder::EventRecorder(asio::any_io_executor ex, std::shared_ptr<kube::RestClient> client,
                             Options options, const Clock& clock, MetricsRegistry* metrics)
    : ex_(std::move(ex)),
      client_(std::move(client)),
      options_(std::move(options)),
      source_(options_.component, options_.instance.empty() ? hostname() : options_.instance),
      correlator_(clock, options_.correlator),
      retry_timer_(ex_),
      expiry_timer_(ex_),
      alive_(std::make_shared<bool>(true)) {
  CHECK(client_ != nullptr);
  CHECK(!options_.component.empty()) << "an event recorder needs a source component";
  CHECK_GT(options_.max_queue, 0u);
  CHECK_GE(options_.max_attempts, 1);
  if (metrics != nullptr) {
    const auto c = [&](const char* result) {
      return &metrics->counter("event_recorder_events_total",
                               "Events recorded, by what became of them: created, patched (a "
                               "repeat), failed, rate_limited or queue_overflow.",
                               {{"result", result}});
    };
    created_ = c("created");
    patched_ = c("patched");
    failed_ = c("failed");
    rate_limited_ = c("rate_limited");
    queue_overflow_ = c("queue_overflow");
  }
}

EventRecorder::~EventRecorder() {
  *alive_ = false;
  if (!queue_.empty()) {
    LOG(WARNING) << "event recorder stopped with " << queue_.size() << " Events not written";
  }
}

void EventRecorder::record(const ObjectReference& involved, EventType type, std::string reason,
                           std::string message) {
  if (involved.kind.empty() || involved.name.empty() || reason.empty()) {
    // A caller bug, but Events are best effort: log it rather than take the operator down.
    LOG(ERROR) << "Event " << reason << " dropped: the involved object needs a kind and a name, "
               << "and the Event a reason (kind=" << involved.kind << " name=" << involved.name
               << ")";
    inc(failed_);
    return;
  }
  EventWrite write = correlator_.observe(involved, type, std::move(reason), std::move(message));
  arm_expiry();
  if (write.action == EventWrite::Action::drop) {
    VLOG(2) << "Event " << to_string(type) << " on " << involved.kind << " " << involved.ns << "/"
            << involved.name << " dropped: over the object's Event rate limit";
    inc(rate_limited_);
    return;
  }
  enqueue(std::move(write));
}

void EventRecorder::arm_expiry() {
  if (expiry_armed_ || options_.sweep_every <= Clock::Duration::zero()) return;
  expiry_armed_ = true;
  // Just past the interval, so with the window as interval what the Event that armed the timer
  // left is stale when it fires.
  expiry_timer_.expires_after(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(options_.sweep_every) +
      std::chrono::seconds(1));
  expiry_timer_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
    if (!*alive) return;
    expiry_armed_ = false;
    if (ec) return;
    const std::size_t dropped = correlator_.expire();
    VLOG(2) << "Event caches: " << dropped << " expired entries dropped, "
            << correlator_.cached_events() << " Events left";
    // Return what the entries held to the system: at rest nothing else frees memory.
    if (dropped > 0) release_free_heap();
    if (!correlator_.empty()) arm_expiry();
  });
}

void EventRecorder::enqueue(EventWrite write) {
  if (write.action == EventWrite::Action::patch) {
    // A storm of one Event becomes one write: a queued create or patch of the same Event takes the
    // newest count and lastTimestamp (the item being sent is no longer in the queue).
    for (EventWrite& queued : queue_) {
      if (queued.event.name == write.event.name) {
        queued.event = std::move(write.event);
        inc(patched_);
        return;
      }
    }
  }
  if (queue_.size() >= options_.max_queue) {
    LOG_EVERY_N(WARNING, 100) << "Event queue full (" << options_.max_queue
                              << "), dropping the oldest: " << describe(queue_.front().event)
                              << " [" << google::COUNTER << " dropped so far]";
    queue_.pop_front();
    inc(queue_overflow_);
  }
  queue_.push_back(std::move(write));
  if (!sender_running_) {
    sender_running_ = true;
    asio::co_spawn(ex_, send_loop(alive_), [this, alive = alive_](std::exception_ptr e) {
      if (!e) return;
      const std::string why = exception_text(e);
      LOG(ERROR) << "Event sender stopped: " << why;
      if (*alive && on_sender_failure_) on_sender_failure_(why);
    });
  }
}

awaitable<void> EventRecorder::send_loop(std::shared_ptr<bool> alive) {
  // co_spawn starts us inline when record() runs on the loop: yield once, so record() returns
  // before any I/O starts and repeats recorded in the same handler coalesce in the queue.
  co_await asio::post(ex_, asio::use_awaitable);
  while (*alive && !queue_.empty()) {
    EventWrite write = std::move(queue_.front());
    queue_.pop_front();
    in_flight_ = true;
    const Outcome outcome = co_await send(std::move(write), alive);
    if (!*alive) co_return;
    in_flight_ = false;
    // A repeat coalesced into a queued write was counted as patched when it was queued.
    if (outcome == Outcome::created) inc(created_);
    if (outcome == Outcome::patched) inc(patched_);
    if (outcome == Outcome::failed) inc(failed_);
  }
  if (!*alive) co_return;
  sender_running_ = false;
  notify_idle();
}

awaitable<EventRecorder::Outcome> EventRecorder::send(EventWrite write,
                                                      std::shared_ptr<bool> alive) {
  const std::shared_ptr<kube::RestClient> client = client_;  // outlives *this if need be
  const EventRecord& event = write.event;
  const auto collection = kEvents.in_namespace(event.ns);
  int attempt = 0;
  while (true) {
    const bool patch = write.action == EventWrite::Action::patch;
    // Everything the request takes by reference is a local that outlives the co_await, and the
    // awaitable is chosen first, then awaited: no co_await inside a conditional expression.
    const kube::ResourcePath target = patch ? collection.named(event.name) : collection;
    const kube::WriteOptions options;
    std::string body = patch ? event_patch_body(event) : event_create_body(event, source_);
    auto writer = client->logging_writes("event-recorder", "Event " + describe(event));
    auto request =
        patch ? writer.patch(target, kube::PatchType::strategic_merge, std::move(body), options)
              : writer.create(target, std::move(body), options);
    auto res = co_await std::move(request);
    if (!*alive) co_return Outcome::failed;
    if (res.ok()) {
      VLOG(3) << "Event " << event.ns << "/" << event.name << " " << (patch ? "patched" : "created")
              << " (count " << event.count << "): " << describe(event);
      co_return patch ? Outcome::patched : Outcome::created;
    }
    const kube::ApiError& err = res.error();
    if (patch && err.is(Errc::not_found)) {
      // The Event expired (the API server keeps them an hour) or was deleted: create it again
      // under the same name with the count so far, as client-go's recordEvent does.
      write.action = EventWrite::Action::create;
      continue;
    }
    if (err.is(Errc::already_exists) || namespace_terminating(err)) {
      VLOG(2) << "Event " << event.ns << "/" << event.name << " not written (" << describe(event)
              << "): " << err.describe();
      co_return Outcome::failed;
    }
    if (++attempt >= options_.max_attempts || !retryable(err)) {
      LOG(WARNING) << "Event " << event.ns << "/" << event.name << " not written ("
                   << describe(event) << ") after " << attempt << " attempt(s): " << err.describe();
      co_return Outcome::failed;
    }
    auto delay = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        options_.retry_delay * (1 << (attempt - 1)));
    if (err.retry_after)
      delay = std::max<std::chrono::steady_clock::duration>(delay, *err.retry_after);
    delay = std::min<std::chrono::steady_clock::duration>(delay, kMaxRetryDelay);
    VLOG(1) << "Event " << event.ns << "/" << event.name << " (" << describe(event)
            << ") failed, retrying in " << std::chrono::duration<double>(delay).count()
            << " s: " << err.describe();
    retry_timer_.expires_after(delay);
    co_await retry_timer_.async_wait(kAwait);
    if (!*alive) co_return Outcome::failed;
  }
}

void EventRecorder::notify_idle() {
  for (asio::steady_timer* t : flush_waiters_) t->cancel();
}

awaitable<bool> EventRecorder::flush(std::chrono::steady_clock::duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (pending() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) co_return false;
    timer.expires_at(deadline);
    flush_waiters_.push_back(&timer);
    co_await timer.async_wait(kAwait);
    std::erase(flush_waiters_, &timer);
  }
  co_return true;
}

}  // namespace ctrl
