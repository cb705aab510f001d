// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/ctrl/events/: the Event recorder, correlator and spam filter. May use: src/asop/,
// src/ctrl/base/, src/ctrl/metrics/, src/kube/api/ (the Rooms table in docs/architecture.md).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ctrl/base/clock.h"
#include "ctrl/events/event.h"
#include "ctrl/events/event_correlator.h"
#include "ctrl/metrics/counter.h"
#include "ctrl/metrics/metrics_registry.h"
#include "kube/api/rest_client.h"

namespace ctrl {

// Writes core/v1 Events about any object, like client-go's record.EventRecorder: EventCorrelator
// decides (rate limit per object, exact repeats become a PATCH of count and lastTimestamp), a
// single sender coroutine writes in order. record() never blocks and never fails the caller:
// Events are best effort, so failures are logged, retried a couple of times at most and dropped.
// Single-threaded like the rest of the runtime.
class EventRecorder final : public asop::EventRecorder {
 public:
  struct Options {
    Options() = default;  // not an aggregate: GCC 12 co_await temporaries (kube/list_options.h)

    std::string component;  // source.component and reportingComponent; required
    std::string instance;   // reportingInstance; empty: the hostname
    // Writes waiting to be sent; when full the oldest is dropped (client-go drops new ones on a
    // full broadcaster channel; the newest state of an object is the more useful one to keep).
    std::size_t max_queue = 1000;
    // Tries per write for failures that may pass (network, timeout, 429, 5xx); client-go tries 12
    // times 10 s apart, which here would hold up every Event behind a dead server.
    int max_attempts = 3;
    Clock::Duration retry_delay = std::chrono::seconds(1);  // doubled per retry, capped at 30 s
    EventCorrelatorOptions correlator;
    // How often a timer drops the cache entries that have expired (EventCorrelator::expire), from
    // the first Event after a quiet spell while any are left: an entry goes at most two windows
    // after its last Event. Zero, the default, arms no timer, so an io_context that the recorder
    // runs on can still run out of work (tests); the operator sets the window.
    Clock::Duration sweep_every{0};
  };

  // `metrics` may be null; otherwise event_recorder_events_total{result} counts what became of
  // each recorded Event. `clock` and `metrics` must outlive the recorder.
  EventRecorder(boost::asio::any_io_executor ex, std::shared_ptr<kube::RestClient> client,
                Options options, const Clock& clock, MetricsRegistry* metrics);
  // A write in flight completes in the background but touches nothing of the recorder; queued
  // writes are lost (flush() first on shutdown).
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // Queues an Event about `involved` in its namespace. `reason` is a stable CamelCase word
  // ("Created", "InvalidSpec"); `message` is for humans and is cut to 1 kB. Must run on the
  // recorder's executor.
  void record(const ObjectReference& involved, EventType type, std::string reason,
              std::string message) override;
  using asop::EventRecorder::record;

  // The object with this uid was deleted: its repeat cache and rate-limit bucket go (writes
  // already queued are still sent).
  void forget(const std::string& uid) { correlator_.forget(uid); }

  // Entries in the repeat cache (see Options::sweep_every).
  std::size_t cached_events() const { return correlator_.cached_events(); }

  // Waits until every queued write has been sent (or given up), at most `timeout`. True when
  // nothing is left; for shutdown and tests.
  boost::asio::awaitable<bool> flush(
      std::chrono::steady_clock::duration timeout = std::chrono::seconds(10));

  // Called if the sender coroutine dies (an exception), with why: Events would queue forever, so
  // the manager ends the process instead.
  void on_sender_failure(std::function<void(const std::string&)> handler) {
    on_sender_failure_ = std::move(handler);
  }

  // Writes queued or in flight.
  std::size_t pending() const { return queue_.size() + (in_flight_ ? 1 : 0); }
  const EventSource& source() const { return source_; }

 private:
  enum class Outcome { created, patched, failed };

  boost::asio::awaitable<void> send_loop(std::shared_ptr<bool> alive);
  boost::asio::awaitable<Outcome> send(EventWrite write, std::shared_ptr<bool> alive);
  void enqueue(EventWrite write);
  void arm_expiry();
  void notify_idle();
  static void inc(Counter* c) {
    if (c != nullptr) c->inc();
  }

  boost::asio::any_io_executor ex_;
  std::shared_ptr<kube::RestClient> client_;
  Options options_;
  EventSource source_;
  EventCorrelator correlator_;
  std::deque<EventWrite> queue_;
  bool in_flight_ = false;
  bool sender_running_ = false;
  std::vector<boost::asio::steady_timer*> flush_waiters_;
  std::function<void(const std::string&)> on_sender_failure_;
  boost::asio::steady_timer retry_timer_;
  boost::asio::steady_timer expiry_timer_;
  bool expiry_armed_ = false;
  Counter* created_ = nullptr;
  Counter* patched_ = nullptr;
  Counter* failed_ = nullptr;
  Counter* rate_limited_ = nullptr;
  Counter* queue_overflow_ = nullptr;
  // Lets the sender, which may outlive the recorder by one request, tell that it is gone.
  std::shared_ptr<bool> alive_;
};

}  // namespace ctrl
