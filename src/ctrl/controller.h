// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "asop/builder.h"
#include "ctrl/base/clock.h"
#include "ctrl/base/free_heap.h"
#include "ctrl/cache/informer.h"
#include "ctrl/metrics/metrics_registry.h"
#include "ctrl/queue/work_queue.h"
#include "ctrl/reconciler.h"
#include "ctrl/write_tracker.h"
#include "kube/api/rest_client.h"

namespace ctrl {

// A work queue and N reconcile coroutines (controller-runtime's controller). Keys come from
// informer handlers; one key is never reconciled twice at once (the queue's dirty/processing
// sets), and each outcome is applied with the Result contract of reconciler.h.
class Controller {
 public:
  struct Options {
    Options() = default;
    std::string name;
    int max_concurrent_reconciles = 4;
    // controller-runtime's SyncPeriod: every period (jittered to 0.9..1.1 of it) each key of
    // `resync_store` is queued again, so a change a watch missed is still repaired. Zero: never.
    std::chrono::milliseconds resync_period{0};
    const ObjectStore* resync_store = nullptr;
    // After a burst, once no worker has had a key for this long, `release_heap` runs once. Not on
    // every idle moment: while objects trickle in one at a time, trimming after each reconcile
    // cost thousands of madvise calls and page faults per minute.
    std::chrono::milliseconds release_heap_after_idle{1000};
    // controller-runtime's ReconciliationTimeout: each reconcile gets this deadline
    // (ReconcileContext::deadline); one still running past it is counted in
    // controller_runtime_reconcile_timeouts_total. Zero: none, controller-runtime's default.
    std::chrono::milliseconds reconcile_timeout{0};
    std::function<void()> release_heap = release_free_heap;
    // Each reconcile's ctrl::Client writes through this (ReconcileContext::client). Null: no
    // Client (tests of the loop alone).
    std::shared_ptr<kube::RestClient> client;
    // Read your own writes (KEP-5647), always on: the Client records every write here, and a key
    // whose caches have not yet observed its last write is not reconciled: it is requeued after
    // `stale_cache_retry` (no rate limiter, no error) and counted in
    // controller_runtime_reconcile_stale_cache_total. Null: the controller's own
    // (write_tracker()), with which the builder registers the caches it wires.
    WriteTracker* write_tracker = nullptr;
    std::chrono::milliseconds stale_cache_retry{100};
  };

  Controller(boost::asio::any_io_executor ex, Options options, Reconciler& reconciler,
             MetricsRegistry& metrics, const Clock& clock, Random& random);
  ~Controller();

  WorkQueue& queue() { return *queue_; }
  WriteTracker& write_tracker() { return *tracker_; }
  const std::string& name() const { return options_.name; }

  // The informer handlers the builder wires for For() and Owns() (ctrl/handlers.h): the object's
  // own key, or the key of its controller owner of that group and kind in `owners` (when given).
  // enqueue_self also drops the write tracker's records of a deleted object's key; with
  // Updates::skip_status_only an update of status alone queues nothing.
  using Updates = asop::Updates;
  Informer::Handler enqueue_self(Updates updates = Updates::all);
  Informer::Handler enqueue_controller_owner(std::string owner_group, std::string owner_kind,
                                             const ObjectStore* owners = nullptr);

  // Runs the workers and the delayed-add timer until shut_down() and the queue is drained.
  boost::asio::awaitable<void> run();
  // Stops taking new keys; in-flight reconciles finish (run() returns after them).
  void shut_down();

 private:
  boost::asio::awaitable<void> worker();
  boost::asio::awaitable<void> delayed_adds();
  boost::asio::awaitable<void> resync();
  boost::asio::awaitable<void> release_heap_when_idle();
  boost::asio::awaitable<void> process(QueueItem item);
  std::string new_reconcile_id();
  void wake();

  boost::asio::any_io_executor ex_;
  Options options_;
  Reconciler& reconciler_;
  MetricsRegistry& metrics_;
  const Clock& clock_;
  Random& random_;
  std::unique_ptr<WorkQueue> queue_;
  std::unique_ptr<WriteTracker> own_tracker_;  // when Options::write_tracker is null
  WriteTracker* tracker_;
  boost::asio::steady_timer wake_;   // workers wait on it; cancel() wakes them all
  boost::asio::steady_timer delay_;  // fires at the queue's next delayed add
  boost::asio::steady_timer resync_timer_;
  // Re-arms delay_ and resync_timer_ when the clock jumps (a test's FakeClock; Clock::on_step).
  std::uint64_t clock_listener_ = 0;
  boost::asio::steady_timer idle_timer_;  // armed when the last worker goes idle after work
  int active_workers_ = 0;
  bool worked_since_trim_ = false;
  bool stopping_ = false;

  Gauge& active_workers_gauge_;
  Histogram& reconcile_time_;
  Counter& errors_;
  Counter& terminal_errors_;
  Counter& panics_;
  Counter& timeouts_;
  Counter& stale_cache_;
  Counter& conflicts_;
};

}  // namespace ctrl
