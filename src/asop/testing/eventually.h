// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <thread>
#include <utility>

namespace asop::testing {

using namespace std::chrono_literals;

// Polls `probe` until it returns true (or a value that converts to true) or `timeout` passes;
// the last value it returned. A controller under test runs on its own thread (TestApp), so
// waiting here blocks nothing it needs.
template <class Probe>
auto eventually(Probe&& probe, std::chrono::milliseconds timeout = 30s,
                std::chrono::milliseconds poll = 50ms) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto value = probe();
    if (static_cast<bool>(value) || std::chrono::steady_clock::now() >= deadline) return value;
    std::this_thread::sleep_for(poll);
  }
}

// Whether `probe` held at every poll for `duration` (false at the first that did not): for what
// must not happen, such as a write at rest.
template <class Probe>
bool consistently(Probe&& probe, std::chrono::milliseconds duration = 2s,
                  std::chrono::milliseconds poll = 50ms) {
  const auto end = std::chrono::steady_clock::now() + duration;
  for (;;) {
    if (!static_cast<bool>(probe())) return false;
    if (std::chrono::steady_clock::now() >= end) return true;
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace asop::testing
