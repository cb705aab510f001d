// SPDX-License-Identifier: Apache-2.0
// connect_proxy: a minimal HTTP CONNECT proxy for e2e tests.
//
//   connect_proxy --listen PORT [--auth BASE64]
//
// Accepts on 127.0.0.1:PORT. Each connection sends one CONNECT HOST:PORT request; the proxy prints
// its request line (one line on stdout), answers 407 when --auth is given and the request's
// Proxy-Authorization is not "Basic BASE64", else connects to HOST:PORT, answers 200 and forwards
// bytes both ways until either side closes. SIGTERM or SIGINT ends it.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "tcp_splice.h"

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

awaitable<void> serve(std::shared_ptr<tcp::socket> client, std::string auth) {
  asio::streambuf in;
  auto [rec, n] = co_await asio::async_read_until(*client, in, "\r\n\r\n", kAwait);
  if (rec) co_return;
  const std::string head(asio::buffers_begin(in.data()), asio::buffers_begin(in.data()) + n);
  in.consume(n);
  const std::string line = head.substr(0, head.find("\r\n"));
  std::cout << line << std::endl;
  const auto reply = [&](const std::string& status) -> awaitable<void> {
    const std::string text = "HTTP/1.1 " + status + "\r\nContent-Length: 0\r\n\r\n";
    co_await asio::async_write(*client, asio::buffer(text), kAwait);
  };
  if (!auth.empty() &&
      head.find("\r\nProxy-Authorization: Basic " + auth + "\r\n") == std::string::npos) {
    co_await reply("407 Proxy Authentication Required");
    co_return;
  }
  // "CONNECT host:port HTTP/1.1"; IPv6 hosts come bracketed.
  const auto sp1 = line.find(' '), sp2 = line.rfind(' ');
  const std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const auto colon = target.rfind(':');
  std::string host = target.substr(0, colon);
  if (!host.empty() && host.front() == '[') host = host.substr(1, host.size() - 2);
  tcp::resolver resolver(client->get_executor());
  auto [dec, results] = co_await resolver.async_resolve(host, target.substr(colon + 1), kAwait);
  auto server = std::make_shared<tcp::socket>(client->get_executor());
  if (dec) {
    co_await reply("502 Bad Gateway");
    co_return;
  }
  auto [cec, ep] = co_await asio::async_connect(*server, results, kAwait);
  if (cec) {
    co_await reply("502 Bad Gateway");
    co_return;
  }
  const std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
  co_await asio::async_write(*client, asio::buffer(ok), kAwait);
  asio::co_spawn(client->get_executor(), asop::test::splice(client, server), asio::detached);
  co_await asop::test::splice(server, client);
}

awaitable<void> accept_loop(tcp::acceptor& acceptor, std::string auth) {
  for (;;) {
    auto [ec, sock] = co_await acceptor.async_accept(kAwait);
    if (ec) co_return;
    asio::co_spawn(acceptor.get_executor(),
                   serve(std::make_shared<tcp::socket>(std::move(sock)), auth), asio::detached);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string port;
  std::string auth;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--listen")
      port = argv[i + 1];
    else if (flag == "--auth")
      auth = argv[i + 1];
  }
  if (port.empty()) {
    std::cerr << "usage: connect_proxy --listen PORT [--auth BASE64]\n";
    return 2;
  }
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                           static_cast<unsigned short>(std::atoi(port.c_str()))));
  asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](auto, auto) { io.stop(); });
  asio::co_spawn(io, accept_loop(acceptor, auth), asio::detached);
  io.run();
  return 0;
}
