// SPDX-License-Identifier: Apache-2.0
// slow_watch_proxy: a TLS-terminating HTTP/1.1 proxy in front of an API server that delays the
// bytes of watch responses, for the read-your-own-writes e2e test (issue 36).
//
//   slow_watch_proxy --listen PORT --upstream HOST:PORT --cert FILE --key FILE
//                    [--upstream-ca FILE] [--delay-ms N]
//
// Serves TLS on 127.0.0.1:PORT with the given certificate. Each request is sent on to the
// upstream over TLS (verified against --upstream-ca when given) with its headers as they came, an
// Authorization bearer token included (a client certificate cannot pass a TLS-terminating proxy:
// use a token). A request whose query has watch=true or watch=1 is a watch: its response bytes
// reach the client --delay-ms (default 1500) after they came from the upstream, in order, and the
// connection closes when the watch ends. Every other request and its response pass at once. Prints
// "listening" once it accepts, one line per watch opened, and ends on SIGTERM or SIGINT.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <memory>
#include <string>
#include <utility>

namespace asio = boost::asio;
namespace ssl = asio::ssl;
namespace http = boost::beast::http;
using asio::awaitable;
using asio::ip::tcp;
using Stream = ssl::stream<tcp::socket>;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

struct Config {
  std::string upstream_host;
  std::string upstream_port;
  std::chrono::milliseconds delay{1500};
};

bool is_watch(std::string_view target) {
  const auto q = target.find('?');
  if (q == std::string_view::npos) return false;
  std::string query = "&" + std::string(target.substr(q + 1)) + "&";
  return query.find("&watch=true&") != std::string::npos ||
         query.find("&watch=1&") != std::string::npos;
}

// Bytes of one watch response, each released `delay` after it arrived.
struct DelayLine {
  explicit DelayLine(asio::any_io_executor ex)
      : signal(ex, asio::steady_timer::time_point::max()) {}
  struct Piece {
    std::chrono::steady_clock::time_point due;
    std::string bytes;
    bool end = false;
  };
  std::deque<Piece> pieces;
  asio::steady_timer signal;
};

awaitable<void> delayed_writer(std::shared_ptr<Stream> client, std::shared_ptr<Stream> upstream,
                               std::shared_ptr<DelayLine> line) {
  for (;;) {
    if (line->pieces.empty()) {
      line->signal.expires_at(asio::steady_timer::time_point::max());
      co_await line->signal.async_wait(kAwait);
      continue;
    }
    auto& piece = line->pieces.front();
    if (std::chrono::steady_clock::now() < piece.due) {
      asio::steady_timer t(client->get_executor(), piece.due);
      co_await t.async_wait(kAwait);
    }
    if (piece.end) break;
    auto [ec, n] = co_await asio::async_write(*client, asio::buffer(piece.bytes), kAwait);
    if (ec) break;
    line->pieces.pop_front();
  }
  // The watch ended, or the client went away: the upstream watch goes with it.
  boost::system::error_code ignored;
  client->lowest_layer().shutdown(tcp::socket::shutdown_both, ignored);
  client->lowest_layer().close(ignored);
  upstream->lowest_layer().close(ignored);
}

// The watch's response as raw bytes (status line, headers, chunked body), through the delay line.
awaitable<void> relay_watch(std::shared_ptr<Stream> client, std::shared_ptr<Stream> upstream,
                            Config config) {
  auto line = std::make_shared<DelayLine>(client->get_executor());
  asio::co_spawn(client->get_executor(), delayed_writer(client, upstream, line), asio::detached);
  char buf[16384];
  for (;;) {
    auto [ec, n] = co_await upstream->async_read_some(asio::buffer(buf), kAwait);
    const auto due = std::chrono::steady_clock::now() + config.delay;
    if (ec) {
      line->pieces.push_back({due, {}, true});
      line->signal.cancel();
      break;
    }
    line->pieces.push_back({due, std::string(buf, n), false});
    line->signal.cancel();
  }
  boost::system::error_code ignored;
  upstream->lowest_layer().close(ignored);
}

awaitable<void> serve(std::shared_ptr<Stream> client, ssl::context& upstream_tls, Config config) {
  auto [hec] = co_await client->async_handshake(ssl::stream_base::server, kAwait);
  if (hec) co_return;
  auto ex = client->get_executor();
  tcp::resolver resolver(ex);
  auto [rec, endpoints] =
      co_await resolver.async_resolve(config.upstream_host, config.upstream_port, kAwait);
  if (rec) co_return;
  auto upstream = std::make_shared<Stream>(ex, upstream_tls);
  auto [cec, ep] = co_await asio::async_connect(upstream->lowest_layer(), endpoints, kAwait);
  if (cec) co_return;
  SSL_set_tlsext_host_name(upstream->native_handle(), config.upstream_host.c_str());
  auto [uhec] = co_await upstream->async_handshake(ssl::stream_base::client, kAwait);
  if (uhec) {
    std::cerr << "slow_watch_proxy: upstream handshake: " << uhec.message() << std::endl;
    co_return;
  }
  boost::beast::flat_buffer from_client;
  boost::beast::flat_buffer from_upstream;
  for (;;) {
    http::request_parser<http::string_body> request;
    request.body_limit(boost::none);
    auto [qec, qn] = co_await http::async_read(*client, from_client, request, kAwait);
    if (qec) break;
    auto req = request.release();
    const bool watch = is_watch(req.target());
    if (watch) req.keep_alive(false);  // one watch per connection: its end is the connection's
    auto [wec, wn] = co_await http::async_write(*upstream, req, kAwait);
    if (wec) break;
    if (watch) {
      std::cout << "watch " << req.target() << std::endl;
      co_await relay_watch(client, upstream, config);
      co_return;
    }
    http::response_parser<http::string_body> response;
    response.body_limit(boost::none);
    auto [sec, sn] = co_await http::async_read(*upstream, from_upstream, response, kAwait);
    if (sec) break;
    auto res = response.release();
    const bool keep = res.keep_alive() && req.keep_alive();
    auto [cwec, cwn] = co_await http::async_write(*client, res, kAwait);
    if (cwec || !keep) break;
  }
  boost::system::error_code ignored;
  client->lowest_layer().close(ignored);
  upstream->lowest_layer().close(ignored);
}

awaitable<void> accept_loop(tcp::acceptor& acceptor, ssl::context& server_tls,
                            ssl::context& upstream_tls, Config config) {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(kAwait);
    if (ec) co_return;
    auto client = std::make_shared<Stream>(std::move(socket), server_tls);
    asio::co_spawn(acceptor.get_executor(), serve(client, upstream_tls, config), asio::detached);
  }
}

[[noreturn]] void usage() {
  std::cerr << "usage: slow_watch_proxy --listen PORT --upstream HOST:PORT --cert FILE --key FILE "
               "[--upstream-ca FILE] [--delay-ms N]\n";
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string listen, upstream, cert, key, upstream_ca;
  Config config;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage();
    const std::string value = argv[++i];
    if (arg == "--listen") {
      listen = value;
    } else if (arg == "--upstream") {
      upstream = value;
    } else if (arg == "--cert") {
      cert = value;
    } else if (arg == "--key") {
      key = value;
    } else if (arg == "--upstream-ca") {
      upstream_ca = value;
    } else if (arg == "--delay-ms") {
      config.delay = std::chrono::milliseconds(std::stoi(value));
    } else {
      usage();
    }
  }
  const auto colon = upstream.rfind(':');
  if (listen.empty() || cert.empty() || key.empty() || colon == std::string::npos) usage();
  config.upstream_host = upstream.substr(0, colon);
  config.upstream_port = upstream.substr(colon + 1);

  asio::io_context io;
  ssl::context server_tls(ssl::context::tls_server);
  server_tls.use_certificate_chain_file(cert);
  server_tls.use_private_key_file(key, ssl::context::pem);
  ssl::context upstream_tls(ssl::context::tls_client);
  if (!upstream_ca.empty()) {
    upstream_tls.load_verify_file(upstream_ca);
    upstream_tls.set_verify_mode(ssl::verify_peer);
  } else {
    upstream_tls.set_verify_mode(ssl::verify_none);
  }
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                           static_cast<unsigned short>(std::stoi(listen))));
  asio::co_spawn(io, accept_loop(acceptor, server_tls, upstream_tls, config), asio::detached);
  asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](auto, int) { io.stop(); });
  std::cout << "listening on 127.0.0.1:" << listen << " delay " << config.delay.count() << " ms"
            << std::endl;
  io.run();
  return 0;
}
