// SPDX-License-Identifier: Apache-2.0
// asop::testing::TestApp: an asop::App on a thread of its own and a clock the test moves.
#include "asop/testing/test_app.h"

#include <glog/logging.h>

#include <atomic>
#include <boost/asio/post.hpp>
#include <future>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "ctrl/app/app.h"
#include "ctrl/app/public_app_impl.h"
#include "ctrl/base/clock.h"
#include "ctrl/controller.h"
#include "ctrl/manager.h"
#include "ctrl/queue/work_queue.h"
#include "kube/http/request_metrics.h"

namespace asop::testing {

std::uint64_t Writes::total() const {
  std::uint64_t n = 0;
  for (const auto& [key, count] : counts) n += count;
  return n;
}

std::uint64_t Writes::count(const std::string& method, const std::string& code) const {
  auto it = counts.find({method, code});
  return it == counts.end() ? 0 : it->second;
}

std::string Writes::text() const {
  std::ostringstream out;
  for (const auto& [key, count] : counts) {
    if (out.tellp() > 0) out << ", ";
    out << key.first << " " << key.second << " x" << count;
  }
  return out.tellp() > 0 ? out.str() : "none";
}

struct TestApp::Impl {
  ctrl::ShiftableClock clock;
  std::unique_ptr<App> app;
  std::thread thread;
  std::atomic<bool> running{false};
  std::atomic<bool> ended{false};
  int exit_code = 0;

  ctrl::App& inner() { return app->impl_->app; }
  ctrl::Manager& manager() { return inner().manager(); }

  // Runs `f` on the App's thread and waits for it; without a running loop, here. Nothing when the
  // loop ended before it ran.
  template <class F>
  auto on_loop(F f) -> std::optional<decltype(f())> {
    if (!running || ended) return f();
    auto task = std::make_shared<std::packaged_task<decltype(f())()>>(std::move(f));
    auto result = task->get_future();
    boost::asio::post(inner().io(), [task] { (*task)(); });
    while (result.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
      if (ended) return std::nullopt;
    }
    return result.get();
  }
};

TestApp::TestApp(const ControlPlane& control_plane, Options options)
    : impl_(std::make_unique<Impl>()) {
  impl_->app = std::make_unique<App>(
      App::Options{options.name, "0.0.0-test", "asop::testing::TestApp\n", options.name});
  ctrl::App::TestHooks hooks;
  hooks.clock = &impl_->clock;
  hooks.handle_signals = false;
  impl_->inner().set_test_hooks(hooks);

  const std::string kubeconfig =
      options.kubeconfig.empty() ? control_plane.kubeconfig() : options.kubeconfig;
  std::vector<std::string> args = {
      options.name, "--kubeconfig=" + kubeconfig, "--health-probe-bind-address=127.0.0.1:0",
      "--metrics-bind-address=127.0.0.1:0", "-v=" + std::to_string(options.verbosity)};
  if (!options.ns.empty()) args.push_back("--namespace=" + options.ns);
  args.insert(args.end(), options.flags.begin(), options.flags.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (auto code = impl_->app->init(static_cast<int>(args.size()), argv.data())) {
    throw std::runtime_error("asop::testing::TestApp: App::init() ended with exit code " +
                             std::to_string(*code) + " (its reason is on stderr)");
  }
}

TestApp::~TestApp() {
  stop();
}

App& TestApp::app() {
  return *impl_->app;
}

void TestApp::start(std::chrono::milliseconds timeout) {
  if (impl_->running) return;
  impl_->running = true;
  impl_->thread = std::thread([impl = impl_.get()] {
    impl->exit_code = impl->manager().run();
    impl->ended = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto synced = impl_->on_loop([m = &impl_->manager()] { return m->caches_synced(); });
    if (impl_->ended) {
      throw std::runtime_error(
          "asop::testing::TestApp: the App stopped before its caches synced: " +
          impl_->manager().failure());
    }
    if (synced && *synced) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      throw std::runtime_error("asop::testing::TestApp: caches not synced after " +
                               std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int TestApp::stop() {
  if (!impl_->running || !impl_->thread.joinable()) return impl_->exit_code;
  if (!impl_->ended) {
    boost::asio::post(impl_->inner().io(), [m = &impl_->manager()] { m->request_shutdown(); });
  }
  impl_->thread.join();
  if (impl_->manager().aborted()) {
    // Its coroutines were abandoned where they stood, on objects the App owns (the manager's
    // contract): leave the App rather than destroy what they point at.
    LOG(ERROR) << "asop::testing::TestApp: the App aborted: " << impl_->manager().failure();
    (void)impl_->app.release();
  }
  return impl_->exit_code;
}

bool TestApp::settle(std::chrono::milliseconds quiet, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto last_change = std::chrono::steady_clock::now();
  std::uint64_t last_writes = writes().total();
  for (;;) {
    auto busy = impl_->on_loop([impl = impl_.get(), quiet] {
      const auto horizon = impl->clock.now() + quiet;
      for (const auto& controller : impl->manager().controllers()) {
        auto& queue = controller->queue();
        if (queue.len() > 0 || queue.processing() > 0) return true;
        if (auto next = queue.next_ready_time(); next && *next <= horizon) return true;
      }
      return false;
    });
    if (!busy) return false;  // the App ended
    const auto now = std::chrono::steady_clock::now();
    const std::uint64_t written = writes().total();
    if (*busy || written != last_writes) {
      last_change = now;
      last_writes = written;
    } else if (now - last_change >= quiet) {
      return true;
    }
    if (now >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Writes TestApp::writes() {
  auto samples =
      impl_->on_loop([impl = impl_.get()] { return impl->inner().requests().snapshot(); });
  Writes w;
  if (!samples) samples = impl_->inner().requests().snapshot();  // the loop ended: nothing writes
  for (const auto& s : *samples) {
    if (s.method != "GET") w.counts[{s.method, s.code}] += s.count;
  }
  return w;
}

void TestApp::advance(std::chrono::nanoseconds d) {
  impl_->on_loop([impl = impl_.get(), d] {
    impl->clock.step(d);
    return true;
  });
}

unsigned short TestApp::probe_port() {
  return impl_->on_loop([m = &impl_->manager()] { return m->health_port(); }).value_or(0);
}

unsigned short TestApp::metrics_port() {
  return impl_->on_loop([m = &impl_->manager()] { return m->metrics_port(); }).value_or(0);
}

}  // namespace asop::testing
