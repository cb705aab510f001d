// SPDX-License-Identifier: Apache-2.0
#include "ctrl/queue/work_queue.h"

#include <glog/logging.h>

#include <algorithm>

namespace ctrl {

namespace {

// Help texts as controller-runtime registers them, so existing dashboards read the same.
constexpr char kDepth[] = "workqueue_depth";
constexpr char kDepthHelp[] = "Current depth of workqueue by workqueue and priority";
constexpr char kAdds[] = "workqueue_adds_total";
constexpr char kAddsHelp[] = "Total number of adds handled by workqueue";
constexpr char kQueueDuration[] = "workqueue_queue_duration_seconds";
constexpr char kQueueDurationHelp[] =
    "How long in seconds an item stays in workqueue before being requested";
constexpr char kWorkDuration[] = "workqueue_work_duration_seconds";
constexpr char kWorkDurationHelp[] = "How long in seconds processing an item from workqueue takes.";
constexpr char kUnfinished[] = "workqueue_unfinished_work_seconds";
constexpr char kUnfinishedHelp[] =
    "How many seconds of work has been done that is in progress and hasn't been observed by "
    "work_duration. Large values indicate stuck threads. One can deduce the number of stuck "
    "threads by observing the rate at which this increases.";
constexpr char kLongest[] = "workqueue_longest_running_processor_seconds";
constexpr char kLongestHelp[] =
    "How many seconds has the longest running processor for workqueue been running.";
constexpr char kRetries[] = "workqueue_retries_total";
constexpr char kRetriesHelp[] = "Total number of retries handled by workqueue";

double seconds(Clock::Duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

WorkQueue::WorkQueue(std::string name, const Clock& clock,
                     std::unique_ptr<RateLimiter> rate_limiter, MetricsRegistry& metrics)
    : name_(std::move(name)),
      clock_(clock),
      rate_limiter_(std::move(rate_limiter)),
      metrics_(metrics),
      labels_{{"controller", name_}, {"name", name_}},
      adds_(metrics.counter(kAdds, kAddsHelp, labels_)),
      retries_(metrics.counter(kRetries, kRetriesHelp, labels_)),
      queue_duration_(metrics.histogram(kQueueDuration, kQueueDurationHelp,
                                        workqueue_duration_buckets(), labels_)),
      work_duration_(metrics.histogram(kWorkDuration, kWorkDurationHelp,
                                       workqueue_duration_buckets(), labels_)) {
  CHECK(!name_.empty());
  CHECK(rate_limiter_);
  depth(0);  // the default priority's series shows 0 before the first add
  // client-go refreshes these two from a 500 ms ticker; computing them at scrape time gives the
  // same numbers without a timer. Registering them also catches two queues with one name.
  metrics_.set_callback(kUnfinished, kUnfinishedHelp, MetricType::gauge, labels_,
                        [this] { return unfinished_work_seconds(); });
  metrics_.set_callback(kLongest, kLongestHelp, MetricType::gauge, labels_,
                        [this] { return longest_running_processor_seconds(); });
}

WorkQueue::~WorkQueue() {
  metrics_.remove_callback(kUnfinished, labels_);
  metrics_.remove_callback(kLongest, labels_);
}

void WorkQueue::add(const std::string& key, int priority) {
  if (shutting_down_) return;
  if (auto known = dirty_.find(key); known != dirty_.end()) {
    // Already queued (or re-added while processing): only a higher priority changes anything.
    if (priority <= known->second.priority) return;
    count_depth(known->second.priority, -1);
    count_depth(priority, +1);
    const std::uint64_t seq = next_seq_++;
    if (!processing_.contains(key)) {
      ready_.erase({-known->second.priority, known->second.seq, key});
      ready_.emplace(-priority, seq, key);
    }
    known->second = {priority, seq};
    return;
  }
  adds_.inc();
  added_at_.try_emplace(key, clock_.now());
  const std::uint64_t seq = next_seq_++;
  dirty_.emplace(key, Dirty{priority, seq});
  count_depth(priority, +1);
  if (processing_.contains(key)) return;
  ready_.emplace(-priority, seq, key);
  notify();
}

void WorkQueue::add_after(const std::string& key, Duration delay, int priority) {
  if (shutting_down_) return;
  retries_.inc();
  if (delay <= Duration::zero()) {
    add(key, priority);
    return;
  }
  const TimePoint ready_at = clock_.now() + delay;
  // client-go's waitingLoop keeps one entry per key and only ever moves it earlier; the
  // priority is the higher of the two, as controller-runtime's AddWithOpts.
  if (auto known = waiting_by_key_.find(key); known != waiting_by_key_.end()) {
    priority = std::max(priority, known->second.priority);
    known->second.priority = priority;
    if (std::get<0>(*known->second.entry) <= ready_at) return;
    waiting_.erase(known->second.entry);
    waiting_by_key_.erase(known);
  }
  const auto it = waiting_.emplace(ready_at, next_seq_++, key).first;
  waiting_by_key_.emplace(key, Waiting{it, priority});
  if (it == waiting_.begin()) notify();  // the event loop's timer must fire sooner
}

void WorkQueue::add_rate_limited(const std::string& key, int priority) {
  // Checked first so a key refused after shutdown does not count as a failure in the limiter.
  if (shutting_down_) return;
  add_after(key, rate_limiter_->when(key), priority);
}

void WorkQueue::forget(const std::string& key) {
  rate_limiter_->forget(key);
}

int WorkQueue::num_requeues(const std::string& key) const {
  return rate_limiter_->num_requeues(key);
}

std::optional<QueueItem> WorkQueue::get_with_priority() {
  if (ready_.empty()) return std::nullopt;
  auto node = ready_.extract(ready_.begin());
  QueueItem item{std::move(std::get<2>(node.value())), -std::get<0>(node.value())};
  const TimePoint now = clock_.now();
  if (auto it = added_at_.find(item.key); it != added_at_.end()) {
    queue_duration_.observe(seconds(now - it->second));
    added_at_.erase(it);
  }
  processing_.emplace(item.key, now);
  dirty_.erase(item.key);
  count_depth(item.priority, -1);
  return item;
}

std::optional<std::string> WorkQueue::get() {
  auto item = get_with_priority();
  if (!item) return std::nullopt;
  return std::move(item->key);
}

void WorkQueue::done(const std::string& key) {
  auto it = processing_.find(key);
  CHECK(it != processing_.end()) << "done(" << key << ") on queue " << name_
                                 << " for a key that is not being processed";
  work_duration_.observe(seconds(clock_.now() - it->second));
  processing_.erase(it);
  if (auto dirty = dirty_.find(key); dirty != dirty_.end()) {
    // Queued now, at the end of its priority, as client-go queues it at Done.
    dirty->second.seq = next_seq_++;
    ready_.emplace(-dirty->second.priority, dirty->second.seq, key);
    notify();
  } else if (shutting_down_ && is_drained()) {
    notify();
  }
}

std::optional<WorkQueue::TimePoint> WorkQueue::next_ready_time() const {
  if (waiting_.empty()) return std::nullopt;
  return std::get<0>(*waiting_.begin());
}

std::size_t WorkQueue::advance() {
  const TimePoint now = clock_.now();
  std::size_t moved = 0;
  while (!waiting_.empty() && std::get<0>(*waiting_.begin()) <= now) {
    std::string key = std::get<2>(*waiting_.begin());
    const auto known = waiting_by_key_.find(key);
    const int priority = known->second.priority;
    waiting_by_key_.erase(known);
    waiting_.erase(waiting_.begin());
    add(key, priority);
    ++moved;
  }
  return moved;
}

void WorkQueue::set_notify(std::function<void()> notify) {
  notify_ = std::move(notify);
}

void WorkQueue::shut_down() {
  // A plain shutdown also ends a drain in progress, as client-go's ShutDown does.
  shutting_down_ = true;
  drain_ = false;
  waiting_.clear();
  waiting_by_key_.clear();
  notify();
}

void WorkQueue::shut_down_with_drain() {
  shutting_down_ = true;
  drain_ = true;
  waiting_.clear();
  waiting_by_key_.clear();
  notify();
}

// client-go waits only for the processing set to empty, but its workers keep taking queued items
// until Get reports shutdown, so in effect a drain ends when both are empty; here that is explicit.
bool WorkQueue::is_drained() const {
  if (!shutting_down_) return false;
  if (!drain_) return true;
  return ready_.empty() && processing_.empty();
}

void WorkQueue::notify() {
  if (notify_) notify_();
}

Gauge& WorkQueue::depth(int priority) {
  if (auto it = depth_gauges_.find(priority); it != depth_gauges_.end()) return *it->second;
  Labels labels = labels_;
  labels["priority"] = depth_gauges_.size() < kMaxPriorityLabels ? std::to_string(priority)
                                                                 : "exceeded_cardinality_limit";
  Gauge& gauge = metrics_.gauge(kDepth, kDepthHelp, labels);
  depth_gauges_.emplace(priority, &gauge);
  return gauge;
}

void WorkQueue::count_depth(int priority, int delta) {
  depth(priority).add(delta);
}

double WorkQueue::unfinished_work_seconds() const {
  const TimePoint now = clock_.now();
  double total = 0;
  for (const auto& [key, started] : processing_) total += seconds(now - started);
  return total;
}

double WorkQueue::longest_running_processor_seconds() const {
  const TimePoint now = clock_.now();
  double longest = 0;
  for (const auto& [key, started] : processing_)
    longest = std::max(longest, seconds(now - started));
  return longest;
}

}  // namespace ctrl
