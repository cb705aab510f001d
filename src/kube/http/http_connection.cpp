// SPDX-License-Identifier: Apache-2.0
#include "kube/http/http_connection.h"

#include <glog/logging.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "kube/http/tls_context.h"
#include "kube/http/transport_error.h"

namespace kube {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::awaitable;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

// Linux keepalive probes: a dead peer is noticed after ~60 s of silence instead of ~2 hours.
void enable_tcp_keepalive(asio::ip::tcp::socket& sock) {
  boost::system::error_code ec;
  sock.set_option(asio::socket_base::keep_alive(true), ec);
  sock.set_option(asio::ip::tcp::no_delay(true), ec);
  const int idle = 30, interval = 10, count = 3;
  const int fd = sock.native_handle();
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

}  // namespace

std::string HttpEndpoint::authority() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
}

HttpConnection::HttpConnection(asio::any_io_executor ex, std::shared_ptr<asio::ssl::context> tls)
    : tls_ctx_(std::move(tls)) {
  if (tls_ctx_) {
    tls_ = std::make_unique<TlsStream>(ex, *tls_ctx_);
  } else {
    plain_ = std::make_unique<PlainStream>(ex);
  }
}

HttpConnection::PlainStream& HttpConnection::tcp() {
  return tls_ ? beast::get_lowest_layer(*tls_) : *plain_;
}

void HttpConnection::close() {
  boost::system::error_code ec;
  tcp().socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  tcp().close();
}

bool HttpConnection::is_open() {
  return tcp().socket().is_open();
}

awaitable<boost::system::error_code> connect_any(
    beast::tcp_stream& stream, const std::vector<asio::ip::tcp::endpoint>& addresses,
    std::chrono::milliseconds timeout) {
  // As Go's dialer: each address gets an equal share of the time left, but at least 2 s (or
  // what is left), so one that does not answer cannot use up the whole deadline.
  constexpr std::chrono::milliseconds kMinShare{2000};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  boost::system::error_code last = asio::error::host_not_found;
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      co_return last == asio::error::host_not_found ? beast::error::timeout : last;
    }
    auto share = left / static_cast<long>(addresses.size() - i);
    if (share < kMinShare) share = std::min(left, kMinShare);
    boost::system::error_code ignored;
    stream.socket().close(ignored);  // a failed attempt leaves the socket unusable
    stream.expires_after(share);
    auto [ec] = co_await stream.async_connect(addresses[i], kAwait);
    if (!ec) co_return ec;
    VLOG(2) << "connect to " << addresses[i] << " failed (" << ec.message() << ")"
            << (i + 1 < addresses.size() ? ", trying the next address" : "");
    last = ec;
  }
  co_return last;
}

awaitable<Result<Ok>> HttpConnection::connect(const HttpEndpoint& ep) {
  using namespace asio::experimental::awaitable_operators;
  auto ex = co_await asio::this_coro::executor;
  const std::string where = ep.proxy ? "proxy " + ep.proxy->host + ":" + ep.proxy->port + " (" +
                                           ep.proxy->source + ") for " + ep.authority()
                                     : ep.authority();
  const std::string& dial_host = ep.proxy ? ep.proxy->host : ep.host;
  const std::string& dial_port = ep.proxy ? ep.proxy->port : ep.port;

  // getaddrinfo cannot be interrupted; race it against the connect deadline.
  asio::ip::tcp::resolver resolver(ex);
  asio::steady_timer deadline(ex, ep.connect_timeout);
  auto resolved = co_await (resolver.async_resolve(dial_host, dial_port, kAwait) ||
                            deadline.async_wait(kAwait));
  if (resolved.index() == 1) {
    co_return transport_error(beast::error::timeout, "resolve " + where);
  }
  auto [rec, results] = std::get<0>(std::move(resolved));
  if (rec) co_return transport_error(rec, "resolve " + where);

  auto& tcp_stream = tcp();
  std::vector<asio::ip::tcp::endpoint> addresses;
  for (const auto& r : results) addresses.push_back(r.endpoint());
  const auto cec = co_await connect_any(tcp_stream, addresses, ep.connect_timeout);
  if (cec) co_return transport_error(cec, "connect to " + where);
  enable_tcp_keepalive(tcp_stream.socket());
  if (ep.proxy) {
    auto tunnel = co_await open_tunnel(ep);
    if (!tunnel) co_return std::move(tunnel).error();
  }
  if (!tls_) {
    tcp_stream.expires_never();
    co_return Ok{};
  }

  SSL* ssl = tls_->native_handle();
  const std::string& name = ep.tls_server_name.empty() ? ep.host : ep.tls_server_name;
  if (std::string why = set_peer_identity(ssl, name); !why.empty()) {
    // make_tls_context checked the same name at start-up, so this is not expected; refuse anyway.
    co_return transport_error(
        boost::system::errc::make_error_code(boost::system::errc::invalid_argument),
        "TLS set-up for " + where + ": " + why);
  }

  tcp_stream.expires_after(ep.handshake_timeout);
  auto [hec] = co_await tls_->async_handshake(asio::ssl::stream_base::client, kAwait);
  tcp_stream.expires_never();
  if (hec) {
    std::string what = "TLS handshake with " + where;
    const long verify = SSL_get_verify_result(ssl);
    if (verify != X509_V_OK) {
      what += " (server certificate not trusted: ";
      what += X509_verify_cert_error_string(verify);
      what += "; verified name ";
      what += name;
      what += ")";
    }
    co_return transport_error(hec, what);
  }
  co_return Ok{};
}

awaitable<Result<Ok>> HttpConnection::open_tunnel(const HttpEndpoint& ep) {
  namespace http = beast::http;
  const std::string where =
      "proxy " + ep.proxy->host + ":" + ep.proxy->port + " (" + ep.proxy->source + ")";
  auto& tcp_stream = tcp();
  tcp_stream.expires_after(ep.connect_timeout);
  http::request<http::empty_body> req{http::verb::connect, ep.authority(), 11};
  req.set(http::field::host, ep.authority());
  if (!ep.proxy->authorization.empty()) {
    req.set(http::field::proxy_authorization, ep.proxy->authorization);
  }
  auto [wec, written] = co_await http::async_write(tcp_stream, req, kAwait);
  if (wec) co_return transport_error(wec, "CONNECT " + ep.authority() + " via " + where);
  // A CONNECT answer has no body to read: after a 2xx the bytes are the tunnel's.
  http::response_parser<http::empty_body> parser;
  parser.skip(true);
  auto [rec, read] = co_await http::async_read(tcp_stream, buffer_, parser, kAwait);
  if (rec) co_return transport_error(rec, "CONNECT " + ep.authority() + " via " + where);
  const int status = parser.get().result_int();
  if (status < 200 || status > 299) {
    co_return transport_error(
        boost::system::errc::make_error_code(boost::system::errc::connection_refused),
        "CONNECT " + ep.authority() + " via " + where + " answered " + std::to_string(status));
  }
  // The server speaks only after we do, so nothing may follow the proxy's answer yet.
  if (buffer_.size() != 0) {
    co_return transport_error(
        boost::system::errc::make_error_code(boost::system::errc::protocol_error),
        "CONNECT " + ep.authority() + " via " + where + ": data before the request");
  }
  co_return Ok{};
}

}  // namespace kube
