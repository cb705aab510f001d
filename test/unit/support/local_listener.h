// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <functional>
#include <memory>
#include <vector>

namespace kube::testing {

// A TCP listener on 127.0.0.1 (random port) for raw-socket test servers: runs `serve` on every
// accepted connection. stop() closes the listener and every socket it accepted or was given.
class LocalListener {
 public:
  using Socket = std::shared_ptr<boost::asio::ip::tcp::socket>;
  using Serve = std::function<boost::asio::awaitable<void>(Socket)>;

  LocalListener(boost::asio::io_context& io, Serve serve)
      : acceptor_(io, {boost::asio::ip::make_address("127.0.0.1"), 0}), serve_(std::move(serve)) {
    port_ = acceptor_.local_endpoint().port();
    boost::asio::co_spawn(io, accept_loop(), boost::asio::detached);
  }
  unsigned short port() const { return port_; }
  void keep(Socket s) { open_.push_back(std::move(s)); }
  void stop() {
    boost::system::error_code ec;
    acceptor_.close(ec);
    for (auto& s : open_) s->close(ec);
  }

 private:
  boost::asio::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, sock] =
          co_await acceptor_.async_accept(boost::asio::as_tuple(boost::asio::use_awaitable));
      if (ec) co_return;
      auto s = std::make_shared<boost::asio::ip::tcp::socket>(std::move(sock));
      keep(s);
      boost::asio::co_spawn(acceptor_.get_executor(), serve_(s), boost::asio::detached);
    }
  }

  boost::asio::ip::tcp::acceptor acceptor_;
  Serve serve_;
  unsigned short port_ = 0;
  std::vector<Socket> open_;
};

}  // namespace kube::testing
