// SPDX-License-Identifier: Apache-2.0
#pragma once

// Waiting inside a test coroutine on the test's io_context: for a condition (polled, with a
// deadline, so a broken runtime fails the test instead of hanging it) or for a while.

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <functional>

namespace ctrl::testing {

inline boost::asio::awaitable<void> sleep_for(std::chrono::milliseconds d) {
  boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, d);
  co_await t.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
}

// True once `done()` holds, false if it still does not after `limit`.
inline boost::asio::awaitable<bool> wait_for(std::function<bool()> done,
                                             std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) co_return false;
    co_await sleep_for(std::chrono::milliseconds(2));
  }
  co_return true;
}

}  // namespace ctrl::testing
