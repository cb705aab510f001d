// SPDX-License-Identifier: Apache-2.0
#include "ctrl/manager.h"

#include <glog/logging.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <csignal>
#include <sstream>

#include "ctrl/base/exception_text.h"

namespace ctrl {
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {
constexpr auto kForever = asio::steady_timer::time_point::max();

ProbeMetricsServer::Options server_options(const std::string& bind_address) {
  ProbeMetricsServer::Options options;
  options.bind_address = bind_address;
  return options;
}

// "0.5s", "120s".
std::string seconds(std::chrono::milliseconds d) {
  std::ostringstream out;
  out << std::chrono::duration<double>(d).count() << "s";
  return out.str();
}
}  // namespace

ProbeMetricsServer::Options Manager::metrics_server_options() const {
  auto options = server_options(options_.metrics_bind_address);
  if (options_.metrics_secure) {
    CHECK(options_.metrics_certificate) << "secure metrics need a certificate";
    options.tls_context = [cert = options_.metrics_certificate] { return cert->context(); };
    options.metrics_authorizer = metrics_authorizer_.get();
  }
  return options;
}

Manager::Manager(asio::io_context& io, Options options, std::shared_ptr<kube::RestClient> client,
                 MetricsRegistry& metrics, const Clock& clock, Random& random)
    : io_(io),
      options_(std::move(options)),
      client_(std::move(client)),
      metrics_(metrics),
      clock_(clock),
      random_(random),
      reviewer_(options_.metrics_secure ? std::make_unique<ApiAccessReviewer>(client_) : nullptr),
      metrics_authorizer_(options_.metrics_secure
                              ? std::make_unique<RequestAuthorizer>(*reviewer_, clock,
                                                                    options_.metrics_auth, &metrics)
                              : nullptr),
      metrics_server_(std::make_unique<ProbeMetricsServer>(
          io.get_executor(), metrics_server_options(), clock, &metrics)),
      probe_server_(std::make_unique<ProbeMetricsServer>(
          io.get_executor(), server_options(options_.health_probe_bind_address), clock, nullptr)),
      shutdown_(io, kForever),
      controllers_done_(io, kForever) {
  // Ready while every cache is complete and current, not merely once synced: an informer that
  // relists after a 410 makes the process unready until the new list is in.
  probe_server_->add_readyz_check("informers", [this] { return caches_current(); });
  metrics_server_->on_failure(
      [this](const std::string& why) { background_failed("metrics server", why); });
  probe_server_->on_failure(
      [this](const std::string& why) { background_failed("probe server", why); });
  if (options_.leader_elect) {
    CHECK(!options_.leader_election_namespace.empty() && !options_.leader_election_id.empty())
        << "leader election needs a namespace and an id";
    LeaderElector::Options le;
    le.lease_namespace = options_.leader_election_namespace;
    le.lease_name = options_.leader_election_id;
    le.config = options_.leader_election;
    elector_ =
        std::make_unique<LeaderElector>(io.get_executor(), client_, le, clock, random, &metrics);
    elector_->on_started_leading([this] { start_controllers(); });
    // controller-runtime's OnStoppedLeading: no graceful shutdown. Another replica may already
    // lead, so nothing of ours may run once the loss is known, not even an in-flight reconcile's
    // next request: stopping the event loop here ends every coroutine at its current suspension.
    elector_->on_stopped_leading([this] { abort_run("leader election lost"); });
  }
}

Manager::~Manager() = default;

Informer& Manager::add_informer(Informer::Options options) {
  informers_.push_back(
      std::make_unique<Informer>(io_.get_executor(), client_, std::move(options), clock_, random_));
  return *informers_.back();
}

Informer& Manager::informer(const Kind& kind, const std::string& label_selector,
                            std::function<void(rapidjson::Document&)> transform) {
  kube::ResourcePath collection = kind.collection();
  if (kind.scope == Kind::Scope::namespaced && !options_.cache.ns.empty()) {
    collection = collection.in_namespace(options_.cache.ns);
  }
  const std::string key = collection.path() + "?" + label_selector;
  if (auto found = shared_informers_.find(key); found != shared_informers_.end()) {
    return *found->second;
  }
  Informer::Options o;
  o.collection = std::move(collection);
  o.label_selector = label_selector;
  o.page_size = options_.cache.page_size;
  o.stream_lists = options_.cache.stream_lists;
  o.transform = std::move(transform);
  Informer& made = add_informer(std::move(o));
  shared_informers_.emplace(key, &made);
  return made;
}

Controller& Manager::add_controller(Controller::Options options, Reconciler& reconciler) {
  controllers_.push_back(std::make_unique<Controller>(io_.get_executor(), std::move(options),
                                                      reconciler, metrics_, clock_, random_));
  return *controllers_.back();
}

void Manager::add_event_recorder(EventRecorder& recorder) {
  recorders_.push_back(&recorder);
  recorder.on_sender_failure(
      [this](const std::string& why) { background_failed("Event sender", "failed: " + why); });
}

void Manager::add_background_task(std::string name, std::function<asio::awaitable<void>()> task,
                                  std::function<void()> stop) {
  CHECK(task && stop) << "background task " << name << " needs a body and a stop";
  tasks_.push_back({std::move(name), std::move(task), std::move(stop)});
}

bool Manager::caches_synced() const {
  for (const auto& informer : informers_) {
    if (!informer->has_synced()) return false;
  }
  return true;
}

bool Manager::caches_current() const {
  for (const auto& informer : informers_) {
    if (!informer->is_current()) return false;
  }
  return true;
}

std::function<void(std::exception_ptr)> Manager::supervise(std::string what, bool fatal_at_once) {
  return [this, what = std::move(what), fatal_at_once](std::exception_ptr e) {
    if (aborted_) return;
    if (!e && shutting_down_) return;  // it was asked to end
    const std::string why = e ? "failed: " + exception_text(e) : "ended unexpectedly";
    if (fatal_at_once) {
      // The leader elector: nobody renews the Lease any more, so a standby may soon lead. Like a
      // lost lease, nothing of ours may run on.
      failure_ = what + " " + why;
      abort_run(failure_);
      return;
    }
    background_failed(what, why);
  };
}

void Manager::background_failed(const std::string& what, const std::string& why) {
  if (aborted_) return;
  LOG(ERROR) << what << " " << why << ": shutting down, exit code " << kExitFailure;
  exit_code_ = kExitFailure;
  if (failure_.empty()) failure_ = what + " " + why;
  request_shutdown();
}

void Manager::abort_run(const std::string& why) {
  if (aborted_) return;
  aborted_ = true;
  exit_code_ = kExitFailure;
  LOG(ERROR) << why << ": exiting now, without graceful shutdown";
  io_.stop();
}

void Manager::request_shutdown() {
  shutdown_requested_ = true;
  shutdown_.cancel();
}

int Manager::run() {
  asio::co_spawn(io_, main(), [this](std::exception_ptr e) {
    if (e) {
      failure_ = "manager failed: " + exception_text(e);
      LOG(ERROR) << failure_;
      exit_code_ = kExitFailure;
    }
    io_.stop();
  });
  io_.run();
  if (aborted_) {
    LOG(ERROR) << "manager aborted, exit code " << exit_code_;
    google::FlushLogFiles(google::GLOG_INFO);
  }
  return exit_code_;
}

void Manager::start_controllers() {
  if (controllers_started_ || shutdown_requested_) return;
  controllers_started_ = true;
  for (auto& controller : controllers_) {
    ++running_controllers_;
    auto supervisor = supervise("controller \"" + controller->name() + "\"");
    asio::co_spawn(io_, controller->run(), [this, supervisor](std::exception_ptr e) {
      if (--running_controllers_ == 0) controllers_done_.cancel();
      supervisor(e);
    });
  }
}

asio::awaitable<bool> Manager::wait_for_cache_sync() {
  auto deadline = std::chrono::steady_clock::now() + options_.cache_sync_timeout;
  asio::steady_timer tick(io_);
  while (!caches_synced()) {
    if (shutdown_requested_) co_return false;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (const auto& informer : informers_) {
        if (!informer->has_synced()) {
          LOG(ERROR) << "timed out after " << seconds(options_.cache_sync_timeout)
                     << " waiting for the cache of " << informer->name()
                     << " to sync: check RBAC (list/watch) and the API server";
          if (failure_.empty()) failure_ = "cache of " + informer->name() + " not synced";
        }
      }
      co_return false;
    }
    tick.expires_after(100ms);
    co_await tick.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  co_return true;
}

asio::awaitable<void> Manager::stop_controllers() {
  if (running_controllers_ == 0) co_return;
  for (auto& controller : controllers_) controller->shut_down();
  // In-flight reconciles finish, within the graceful shutdown timeout.
  controllers_done_.expires_after(options_.graceful_shutdown_timeout);
  co_await controllers_done_.async_wait(asio::as_tuple(asio::use_awaitable));
  if (running_controllers_ > 0) {
    LOG(WARNING) << "graceful shutdown timed out with " << running_controllers_
                 << " controller(s) still reconciling";
  } else {
    LOG(INFO) << "workers drained: no reconcile in flight";
  }
}

asio::awaitable<void> Manager::flush_events() {
  for (EventRecorder* recorder : recorders_) {
    const std::size_t queued = recorder->pending();
    if (queued == 0) continue;
    if (co_await recorder->flush(options_.event_flush_timeout)) {
      LOG(INFO) << "flushed " << queued << " queued Event write(s)";
    } else {
      LOG(WARNING) << "gave up flushing Events after " << seconds(options_.event_flush_timeout)
                   << ": " << recorder->pending() << " write(s) not sent";
    }
  }
}

asio::awaitable<void> Manager::main() {
  asio::signal_set signals(io_);
  if (options_.handle_signals) {
    signals.add(SIGINT);
    signals.add(SIGTERM);
  }
  signals.async_wait([this](boost::system::error_code ec, int signal) {
    if (ec) return;
    LOG(INFO) << "received " << (signal == SIGTERM ? "SIGTERM" : "SIGINT")
              << ": shutting down gracefully";
    request_shutdown();
  });

  metrics_server_->start();
  probe_server_->start();
  if (metrics_server_->enabled()) LOG(INFO) << "serving metrics on port " << metrics_port();
  if (probe_server_->enabled()) LOG(INFO) << "serving probes on port " << health_port();

  for (auto& informer : informers_) {
    asio::co_spawn(io_, informer->run(), supervise("informer \"" + informer->name() + "\""));
  }
  for (auto& task : tasks_) {
    asio::co_spawn(io_, task.task(), supervise("background task \"" + task.name + "\""));
  }
  bool elector_started = false;
  if (!co_await wait_for_cache_sync()) {
    if (!shutdown_requested_) exit_code_ = kExitFailure;
  } else {
    LOG(INFO) << "all caches synced";
    if (elector_) {
      elector_started = true;
      asio::co_spawn(io_, elector_->run(), supervise("leader elector", true));
    } else {
      start_controllers();
    }
    if (!shutdown_requested_) {
      co_await shutdown_.async_wait(asio::as_tuple(asio::use_awaitable));
    }
  }

  // The order matters: no reconcile may record an Event after the flush, and the Lease is
  // released last, so a standby starts only once nothing of ours writes any more.
  shutting_down_ = true;
  signals.cancel();
  co_await stop_controllers();
  co_await flush_events();
  if (elector_started) co_await elector_->release();
  for (auto& informer : informers_) informer->stop();
  for (auto& task : tasks_) task.stop();
  metrics_server_->stop();
  probe_server_->stop();
  LOG(INFO) << "manager stopped, exit code " << exit_code_;
}

}  // namespace ctrl
