// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <exception>
#include <functional>

namespace kube::testing {

// Runs one test coroutine on `io` with a hard deadline (no test can hang the suite), then calls
// `cleanup` (stop fake servers) and drains the remaining work. A REQUIRE failing inside the
// coroutine is rethrown here so Catch2 reports it.
inline void run_async(boost::asio::io_context& io, boost::asio::awaitable<void> body,
                      std::function<void()> cleanup = {},
                      std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  bool done = false;
  std::exception_ptr error;
  boost::asio::co_spawn(io, std::move(body), [&](std::exception_ptr e) {
    error = e;
    done = true;
    if (cleanup) cleanup();
  });
  io.run_for(limit);
  if (!done && cleanup) cleanup();
  io.restart();
  io.run_for(std::chrono::seconds(2));
  if (error) std::rethrow_exception(error);
  REQUIRE(done);
}

}  // namespace kube::testing
