// SPDX-License-Identifier: Apache-2.0
#include "ctrl/controller.h"

#include <glog/logging.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>
#include <optional>

#include "ctrl/base/exception_text.h"
#include "ctrl/base/free_heap.h"
#include "ctrl/base/random_uuid.h"
#include "ctrl/client.h"
#include "ctrl/handlers.h"
#include "ctrl/metrics/histogram.h"
#include "ctrl/object/object_meta.h"

namespace ctrl {
namespace asio = boost::asio;

namespace {

constexpr auto kForever = asio::steady_timer::time_point::max();

const char* result_label(ReconcileResult::Kind kind) {
  switch (kind) {
    case ReconcileResult::Kind::done:
      return "success";
    case ReconcileResult::Kind::requeue_after:
      return "requeue_after";
    case ReconcileResult::Kind::conflict:
      return "requeue";
    case ReconcileResult::Kind::error:
    case ReconcileResult::Kind::terminal:
      return "error";
  }
  return "unknown";
}

}  // namespace

Controller::Controller(asio::any_io_executor ex, Options options, Reconciler& reconciler,
                       MetricsRegistry& metrics, const Clock& clock, Random& random)
    : ex_(ex),
      options_(std::move(options)),
      reconciler_(reconciler),
      metrics_(metrics),
      clock_(clock),
      random_(random),
      queue_(std::make_unique<WorkQueue>(options_.name, clock,
                                         default_controller_rate_limiter(clock), metrics)),
      own_tracker_(options_.write_tracker ? nullptr : std::make_unique<WriteTracker>(clock)),
      tracker_(options_.write_tracker ? options_.write_tracker : own_tracker_.get()),
      wake_(ex, kForever),
      delay_(ex, kForever),
      resync_timer_(ex, kForever),
      idle_timer_(ex, kForever),
      active_workers_gauge_(metrics.gauge("controller_runtime_active_workers",
                                          "Number of currently used workers per controller",
                                          {{"controller", options_.name}})),
      reconcile_time_(metrics.histogram("controller_runtime_reconcile_time_seconds",
                                        "Length of time per reconciliation per controller",
                                        reconcile_time_buckets(), {{"controller", options_.name}})),
      errors_(metrics.counter("controller_runtime_reconcile_errors_total",
                              "Total number of reconciliation errors per controller",
                              {{"controller", options_.name}})),
      terminal_errors_(
          metrics.counter("controller_runtime_terminal_reconcile_errors_total",
                          "Total number of terminal reconciliation errors per controller",
                          {{"controller", options_.name}})),
      panics_(metrics.counter("controller_runtime_reconcile_panics_total",
                              "Total number of reconciliation panics per controller",
                              {{"controller", options_.name}})),
      timeouts_(metrics.counter("controller_runtime_reconcile_timeouts_total",
                                "Total number of reconciliation timeouts per controller",
                                {{"controller", options_.name}})),
      stale_cache_(metrics.counter(
          "controller_runtime_reconcile_stale_cache_total",
          "Total number of reconciliations held back per controller because a cache had not yet "
          "observed the controller's own last write",
          {{"controller", options_.name}})),
      conflicts_(metrics.counter(
          "controller_runtime_reconcile_conflicts_total",
          "Total number of reconciliations per controller that ended in a write refused with 409 "
          "Conflict, requeued with backoff and not counted as errors",
          {{"controller", options_.name}})) {
  CHECK_GT(options_.max_concurrent_reconciles, 0);
  metrics
      .gauge("controller_runtime_max_concurrent_reconciles",
             "Maximum number of concurrent reconciles per controller",
             {{"controller", options_.name}})
      .set(options_.max_concurrent_reconciles);
  // Pre-create the result series so dashboards see zeros before the first reconcile.
  for (const char* result : {"success", "error", "requeue", "requeue_after"}) {
    metrics.counter("controller_runtime_reconcile_total",
                    "Total number of reconciliations per controller",
                    {{"controller", options_.name}, {"result", result}});
  }
  queue_->set_notify([this] { wake(); });
  clock_listener_ = clock_.on_step([this] {
    delay_.cancel();
    resync_timer_.cancel();
  });
}

Controller::~Controller() {
  clock_.forget_step(clock_listener_);
  queue_->set_notify(nullptr);
}

void Controller::wake() {
  wake_.cancel();
  delay_.cancel();
}

Informer::Handler Controller::enqueue_self(Updates updates) {
  auto enqueue = handlers::enqueue(
      *queue_, handlers::own_key,
      updates == Updates::skip_status_only ? handlers::not_status_only_update : nullptr);
  return [this, enqueue = std::move(enqueue)](const StoreChange& change) {
    // The object is gone: what our writes to it and its children returned is moot.
    if (change.type == StoreChange::Type::deleted) {
      const auto& gone = change.new_object ? change.new_object : change.old_object;
      if (gone) tracker_->forget_owner(object_key(*gone));
    }
    enqueue(change);
  };
}

Informer::Handler Controller::enqueue_controller_owner(std::string owner_group,
                                                       std::string owner_kind,
                                                       const ObjectStore* owners) {
  return handlers::enqueue(*queue_, handlers::controller_owner_keys(std::move(owner_group),
                                                                    std::move(owner_kind), owners));
}

asio::awaitable<void> Controller::run() {
  LOG(INFO) << "controller=" << options_.name
            << " starting workers count=" << options_.max_concurrent_reconciles;
  const bool resyncs = options_.resync_period.count() > 0 && options_.resync_store != nullptr;
  int running = options_.max_concurrent_reconciles + 2 + (resyncs ? 1 : 0);
  asio::steady_timer finished(ex_, kForever);
  auto on_exit = [&](std::exception_ptr e) {
    if (e) LOG(ERROR) << "controller=" << options_.name << " worker failed: " << exception_text(e);
    if (--running == 0) finished.cancel();
  };
  for (int i = 0; i < options_.max_concurrent_reconciles; ++i) {
    asio::co_spawn(ex_, worker(), on_exit);
  }
  asio::co_spawn(ex_, delayed_adds(), on_exit);
  asio::co_spawn(ex_, release_heap_when_idle(), on_exit);
  if (resyncs) asio::co_spawn(ex_, resync(), on_exit);
  co_await finished.async_wait(asio::as_tuple(asio::use_awaitable));
  LOG(INFO) << "controller=" << options_.name << " all workers finished";
}

void Controller::shut_down() {
  stopping_ = true;
  queue_->shut_down_with_drain();
  wake();
  resync_timer_.cancel();
  idle_timer_.cancel();
}

asio::awaitable<void> Controller::resync() {
  while (!stopping_) {
    const double factor = 0.9 + 0.2 * random_.float64();
    // Due on the controller's clock; a step of a test's clock cancels the wait to look again.
    const auto due = clock_.now() + std::chrono::duration_cast<std::chrono::milliseconds>(
                                        options_.resync_period * factor);
    while (!stopping_ && clock_.now() < due) {
      resync_timer_.expires_after(due - clock_.now());
      co_await resync_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    if (stopping_) break;
    auto keys = options_.resync_store->keys();
    VLOG(1) << "controller=" << options_.name << " resync: queueing " << keys.size() << " keys";
    for (const auto& key : keys) queue_->add(key, kLowPriority);
  }
}

asio::awaitable<void> Controller::release_heap_when_idle() {
  while (!stopping_) {
    auto [ec] = co_await idle_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec || stopping_) continue;  // re-armed by a worker going idle again, or shutting down
    // Re-armed after it fired but before this ran: wait for the new expiry.
    if (idle_timer_.expiry() > std::chrono::steady_clock::now()) continue;
    idle_timer_.expires_at(kForever);
    // A worker still busy re-arms the timer when it goes idle. Work that never pauses for the
    // delay is never trimmed after: its memory is in use anyway.
    if (active_workers_ == 0 && worked_since_trim_) {
      worked_since_trim_ = false;
      if (options_.release_heap) options_.release_heap();
    }
  }
}

asio::awaitable<void> Controller::delayed_adds() {
  while (!stopping_) {
    // The queue's times are the controller's clock's: wait for the time left on it.
    if (auto next = queue_->next_ready_time()) {
      delay_.expires_after(*next - clock_.now());
    } else {
      delay_.expires_at(kForever);
    }
    co_await delay_.async_wait(asio::as_tuple(asio::use_awaitable));
    queue_->advance();
  }
}

asio::awaitable<void> Controller::worker() {
  while (!stopping_) {
    auto item = queue_->get_with_priority();
    if (!item) {
      // The last worker going idle after work starts the idle clock (again).
      if (active_workers_ == 0 && worked_since_trim_) {
        idle_timer_.expires_after(options_.release_heap_after_idle);
      }
      co_await wake_.async_wait(asio::as_tuple(asio::use_awaitable));
      continue;
    }
    co_await process(std::move(*item));
  }
}

std::string Controller::new_reconcile_id() {
  return random_uuid(random_);  // as controller-runtime's reconcileID
}

asio::awaitable<void> Controller::process(QueueItem item) {
  const std::string& key = item.key;
  Request request = Request::from_key(key);
  ReconcileContext context;
  context.controller = options_.name;
  context.reconcile_id = new_reconcile_id();
  context.log_prefix = "controller=" + options_.name + " namespace=" + request.ns +
                       " name=" + request.name + " reconcileID=" + context.reconcile_id;

  // Read your own writes (KEP-5647): a cache that has not yet observed our last write for this key
  // would start the reconcile from before it. The informer's event for that write usually brings
  // the key back first; the delayed add is the fallback.
  if (auto behind = tracker_->behind(key)) {
    stale_cache_.inc();
    VLOG(1) << context.log_prefix << " cache behind our last write, requeued after "
            << options_.stale_cache_retry.count() << " ms: cache=\"" << behind->cache
            << "\" object=" << behind->object_key << " written=" << behind->written
            << " observed=" << (behind->observed.empty() ? "(none)" : behind->observed);
    queue_->add_after(key, options_.stale_cache_retry, item.priority);
    queue_->done(key);
    co_return;
  }

  active_workers_gauge_.set(++active_workers_);
  worked_since_trim_ = true;
  auto start = clock_.now();
  if (options_.reconcile_timeout.count() > 0) context.deadline = start + options_.reconcile_timeout;
  // The reconcile's door: its writes carry the deadline and the anchors, and record themselves.
  std::optional<Client> client;
  if (options_.client) {
    client.emplace(make_client(
        context.deadline ? options_.client->with_deadline(*context.deadline) : *options_.client,
        *tracker_, request, context.log_prefix));
    context.client = &*client;
  }
  ReconcileResult result;
  try {
    result = co_await reconciler_.reconcile(request, context);
  } catch (const std::exception& e) {
    panics_.inc();
    result = ReconcileResult::error(std::string("reconcile threw: ") + e.what());
  } catch (...) {
    panics_.inc();
    result = ReconcileResult::error("reconcile threw a non-standard exception");
  }
  active_workers_gauge_.set(--active_workers_);
  const auto end = clock_.now();
  reconcile_time_.observe(std::chrono::duration<double>(end - start).count());
  // As controller-runtime: counted when the deadline passed, whatever the reconciler returned; an
  // error result is retried with backoff as any error.
  if (context.deadline && end >= *context.deadline) {
    timeouts_.inc();
    LOG(WARNING) << context.log_prefix << " reconcile timed out after "
                 << std::chrono::duration_cast<std::chrono::milliseconds>(end - start).count()
                 << " ms (--reconcile-timeout " << options_.reconcile_timeout.count() << " ms)";
  }
  metrics_
      .counter("controller_runtime_reconcile_total",
               "Total number of reconciliations per controller",
               {{"controller", options_.name}, {"result", result_label(result.kind)}})
      .inc();

  VLOG(1) << context.log_prefix << " reconciled result=" << result_label(result.kind);
  const int priority = result.priority.value_or(item.priority);
  switch (result.kind) {
    case ReconcileResult::Kind::error:
      errors_.inc();
      LOG(ERROR) << context.log_prefix << " Reconciler error: " << result.message;
      queue_->add_rate_limited(key, priority);
      break;
    case ReconcileResult::Kind::terminal:
      errors_.inc();
      terminal_errors_.inc();
      LOG(ERROR) << context.log_prefix
                 << " Reconciler error (terminal, not retried): " << result.message;
      queue_->forget(key);
      break;
    case ReconcileResult::Kind::conflict:
      // Someone wrote the object since our cache showed it: its event is on the way, and the
      // rate limiter spaces the retries. Not an error.
      conflicts_.inc();
      VLOG(1) << context.log_prefix << " conflict, requeued: " << result.message;
      queue_->add_rate_limited(key, priority);
      break;
    case ReconcileResult::Kind::requeue_after:
      queue_->forget(key);
      queue_->add_after(key, result.after, priority);
      break;
    case ReconcileResult::Kind::done:
      queue_->forget(key);
      break;
  }
  queue_->done(key);
}

}  // namespace ctrl
