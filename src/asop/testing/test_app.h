// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "asop/app.h"
#include "asop/testing/control_plane.h"

namespace asop::testing {

// The writes (requests other than GET) an App made, by HTTP method and status code ("201",
// "409", or "<error>" when no answer came): what a reconcile at rest must not add to.
struct Writes {
  std::map<std::pair<std::string, std::string>, std::uint64_t> counts;  // (method, code) -> n

  std::uint64_t total() const;
  std::uint64_t count(const std::string& method, const std::string& code) const;
  // "PATCH 200 x3, POST 201 x1": for a failure message.
  std::string text() const;
};

// The controller under test as its main() builds it: an asop::App with the control plane's
// kubeconfig, limited to one namespace when given, probe and metrics servers on free loopback
// ports, no leader election, no signal handling, and a clock the test moves (advance()). Register
// informers and controllers on app() as main() does, then start(): the App runs on a thread of
// its own until stop() or the destructor.
class TestApp {
 public:
  struct Options {
    std::string ns = {};          // empty: every namespace
    std::string kubeconfig = {};  // empty: the control plane's (a FaultProxy's, to break it)
    std::vector<std::string> flags = {};  // more of the App's flags: "--reconcile-timeout=2s"
    std::string name = "asop-test";       // User-Agent, Events' source component
    int verbosity = 0;                    // -v: 1 logs each write with its reason
  };

  TestApp(const ControlPlane& control_plane, Options options);
  explicit TestApp(const ControlPlane& control_plane) : TestApp(control_plane, Options()) {}
  ~TestApp();
  TestApp(const TestApp&) = delete;
  TestApp& operator=(const TestApp&) = delete;

  App& app();
  App* operator->() { return &app(); }

  // Runs the App and returns once every cache has synced (the controllers start then); throws
  // when it fails first or takes longer than `timeout`.
  void start(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // Graceful shutdown, as at SIGTERM; the App's exit code. The destructor calls it.
  int stop();

  // Waits until the App is at rest: no key queued or due within `quiet`, none reconciling, and
  // no write for `quiet`. False when `timeout` passes first (a hot loop never settles).
  bool settle(std::chrono::milliseconds quiet = std::chrono::milliseconds(500),
              std::chrono::milliseconds timeout = std::chrono::seconds(30));
  Writes writes();

  // Moves the App's clock forward by `d`: every requeue_after, resync and delayed retry due
  // within it runs now; everything else keeps real time.
  void advance(std::chrono::nanoseconds d);

  unsigned short probe_port();
  unsigned short metrics_port();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace asop::testing
