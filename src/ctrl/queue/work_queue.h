// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/ctrl/queue/: the work queue and its rate limiters. May use: src/ctrl/base/,
// src/ctrl/metrics/ (the Rooms table in docs/architecture.md).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

#include "ctrl/base/clock.h"
#include "ctrl/metrics/metrics_registry.h"
#include "ctrl/queue/rate_limiter.h"

namespace ctrl {

// The priority of keys from an initial list or a resync: controller-runtime's handler.LowPriority.
// Every other add defaults to 0; higher is served first.
inline constexpr int kLowPriority = -100;

// A key handed out by the queue, with the priority it was queued at.
struct QueueItem {
  std::string key;
  int priority = 0;
};

// client-go's rate-limiting, delaying work queue for string keys (`namespace/name`), with the
// priorities of controller-runtime's priorityqueue, without threads or I/O so it can run on the
// single event-loop thread and be tested by stepping a clock.
//
// Semantics copied from k8s.io/client-go/util/workqueue:
//  - FIFO within a priority, higher priorities first; a key that is already waiting is not added
//    twice (the dirty set dedups). Added again at a higher priority, it moves to the end of that
//    priority (controller-runtime's rule, so FIFO holds within each priority); a lower one changes
//    nothing.
//  - A key handed out by get() is "processing" until done(). Adding it meanwhile only marks it
//    dirty; done() puts it back in the queue once. So one key is never processed twice at once.
//  - add_after holds keys until their ready time (the earliest wins when a key is added again);
//    the event loop calls advance() when next_ready_time() passes, instead of a waiting goroutine.
//  - add_rate_limited delays by the rate limiter; forget/num_requeues pass through to it.
//  - After shutdown no adds are accepted and delayed keys are dropped, but get() still hands out
//    what is queued (client-go's Get returns shutdown only once the queue is empty).
//
// A consumer does not block in get(): it calls get(), and when that is empty waits to be
// notified (set_notify) and tries again.
class WorkQueue {
 public:
  using Duration = Clock::Duration;
  using TimePoint = Clock::TimePoint;

  // Metrics are recorded into `metrics` with labels controller=<name>, name=<name>, the labels
  // controller-runtime gives its queues. `clock` and `metrics` must outlive the queue; the name
  // must be unique per registry (a second queue with the same name fails a CHECK).
  WorkQueue(std::string name, const Clock& clock, std::unique_ptr<RateLimiter> rate_limiter,
            MetricsRegistry& metrics);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void add(const std::string& key, int priority = 0);
  // Adds `key` once `delay` has passed; a delay <= 0 adds it now. Counts as a retry in
  // workqueue_retries_total, as client-go's AddAfter does. A key delayed twice keeps the earlier
  // time and the higher priority.
  void add_after(const std::string& key, Duration delay, int priority = 0);
  // add_after with the rate limiter's delay for `key` (one more failure for it).
  void add_rate_limited(const std::string& key, int priority = 0);
  // The key succeeded: its rate-limiter history is cleared. Does not remove it from the queue.
  void forget(const std::string& key);
  int num_requeues(const std::string& key) const;

  // The next key to process, or nothing when none is ready. The caller must call done(key).
  std::optional<QueueItem> get_with_priority();
  std::optional<std::string> get();
  // Processing of `key` finished; if it was added again meanwhile, it is queued again now.
  void done(const std::string& key);

  // When the earliest delayed key becomes ready; nothing when none are delayed.
  std::optional<TimePoint> next_ready_time() const;
  // Moves every delayed key whose time has come into the queue; returns how many.
  std::size_t advance();

  // Called after any change a waiting consumer may care about: a key became available to get(),
  // next_ready_time() moved earlier, shutdown began, or the queue drained. It runs inside the
  // queue call that caused it, so it should only signal (post, cancel a timer), not process keys.
  void set_notify(std::function<void()> notify);

  // Stops accepting adds; whatever is queued can still be taken. is_drained() is true at once.
  void shut_down();
  // Stops accepting adds; is_drained() becomes true only when nothing is queued or processing,
  // so a manager can let in-flight work finish before it exits (client-go's ShutDownWithDrain).
  void shut_down_with_drain();
  bool shutting_down() const { return shutting_down_; }
  bool is_drained() const;

  const std::string& name() const { return name_; }
  std::size_t len() const { return ready_.size(); }        // ready for get()
  std::size_t waiting() const { return waiting_.size(); }  // delayed by add_after
  std::size_t processing() const { return processing_.size(); }

 private:
  // Ordered by ready time, then by insertion, so equal times come out first-in first-out.
  using WaitEntry = std::tuple<TimePoint, std::uint64_t, std::string>;
  // Ordered by priority (negated: highest first), then by insertion.
  using ReadyEntry = std::tuple<int, std::uint64_t, std::string>;
  struct Dirty {
    int priority;
    std::uint64_t seq;  // its place in ready_ while queued
  };
  struct Waiting {
    std::set<WaitEntry>::iterator entry;
    int priority;
  };

  void notify();
  Gauge& depth(int priority);
  void count_depth(int priority, int delta);
  double unfinished_work_seconds() const;
  double longest_running_processor_seconds() const;

  std::string name_;
  const Clock& clock_;
  std::unique_ptr<RateLimiter> rate_limiter_;
  MetricsRegistry& metrics_;
  Labels labels_;

  std::set<ReadyEntry> ready_;
  std::unordered_map<std::string, Dirty> dirty_;           // queued, or re-added while processing
  std::unordered_map<std::string, TimePoint> processing_;  // key -> when get() handed it out
  std::unordered_map<std::string, TimePoint> added_at_;    // for queue_duration_seconds
  std::set<WaitEntry> waiting_;
  std::unordered_map<std::string, Waiting> waiting_by_key_;
  std::uint64_t next_seq_ = 0;

  bool shutting_down_ = false;
  bool drain_ = false;
  std::function<void()> notify_;

  // workqueue_depth per priority label, as controller-runtime's; past kMaxPriorityLabels distinct
  // priorities, one "exceeded_cardinality_limit" series takes the rest.
  static constexpr std::size_t kMaxPriorityLabels = 25;
  std::map<int, Gauge*> depth_gauges_;
  Counter& adds_;
  Counter& retries_;
  Histogram& queue_duration_;
  Histogram& work_duration_;
};

}  // namespace ctrl
