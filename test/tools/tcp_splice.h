// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <memory>

namespace asop::test {

// Copies bytes from `from` to `to` until `from` ends or either fails, then half-closes `to`, so
// two of these make a tunnel (test proxies).
inline boost::asio::awaitable<void> splice(std::shared_ptr<boost::asio::ip::tcp::socket> from,
                                           std::shared_ptr<boost::asio::ip::tcp::socket> to) {
  constexpr auto await = boost::asio::as_tuple(boost::asio::use_awaitable);
  char buf[16384];
  for (;;) {
    auto [ec, n] = co_await from->async_read_some(boost::asio::buffer(buf), await);
    if (ec) break;
    auto [wec, w] = co_await boost::asio::async_write(*to, boost::asio::buffer(buf, n), await);
    if (wec) break;
  }
  boost::system::error_code ignored;
  to->shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
}

}  // namespace asop::test
