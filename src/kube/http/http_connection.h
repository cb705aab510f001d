// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kube/config/rest_config.h"
#include "kube/core/result.h"

namespace kube {

// Where and how to connect: the API server's address and the TLS identity to verify.
struct HttpEndpoint {
  // Not an aggregate: see ListOptions (GCC 12 co_await temporaries).
  HttpEndpoint() = default;

  std::string host;  // name or IP literal (IPv6 without brackets)
  std::string port;
  bool tls = true;
  std::string tls_server_name;  // SNI and verified name; empty: host
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds handshake_timeout{10'000};
  // Set: connect to the proxy and open a CONNECT tunnel to host:port through it (TLS runs inside).
  std::optional<HttpProxy> proxy;

  std::string authority() const;  // host:port, IPv6 bracketed
};

// One HTTP/1.1 connection to an API server, plain TCP or TLS over Beast's tcp_stream (whose
// expires_after gives every operation a deadline). Holds the read buffer, since bytes read past
// one response belong to the next on a keep-alive connection.
// Connects `stream` to the first of `addresses` that answers. Each address gets an equal share of
// the time left (at least 2 s), as Go's dialer splits its deadline, so an address that drops SYNs
// does not spend the whole `timeout` before the next is tried. The last error when none answers.
boost::asio::awaitable<boost::system::error_code> connect_any(
    boost::beast::tcp_stream& stream, const std::vector<boost::asio::ip::tcp::endpoint>& addresses,
    std::chrono::milliseconds timeout);

class HttpConnection {
 public:
  using PlainStream = boost::beast::tcp_stream;
  using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

  // `tls` may be null for plain http endpoints.
  HttpConnection(boost::asio::any_io_executor ex, std::shared_ptr<boost::asio::ssl::context> tls);
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Resolves, connects (TCP keepalive and no-delay on), and for TLS sets SNI, the expected host
  // name or IP, and handshakes. Each phase has its own deadline (Errc::timeout when exceeded).
  boost::asio::awaitable<Result<Ok>> connect(const HttpEndpoint& endpoint);

  // Calls f(stream) with the concrete stream type, so Beast's generic algorithms can be awaited
  // on either kind: `co_await conn.visit([&](auto& s) { return http::async_read(s, ...); })`.
  template <class F>
  decltype(auto) visit(F&& f) {
    if (tls_) return f(*tls_);
    return f(*plain_);
  }

  // Beast keeps a chunk header with its extensions, and the trailers, whole in the read buffer
  // until their line ends; headers are bounded by the parser, body bytes leave the buffer as they
  // are parsed. Without a maximum a server could make the buffer as large as it likes; with it a
  // longer element fails the read with http::error::buffer_overflow.
  static constexpr std::size_t kMaxReadBufferBytes = 256 * 1024;

  PlainStream& tcp();
  boost::beast::flat_buffer& buffer() { return buffer_; }
  // Closes the socket; pending operations complete with operation_aborted.
  void close();
  bool is_open();

  // How many requests this connection has carried: >0 means it came from the pool, so a failure
  // before any response byte may be a keep-alive connection the server already closed.
  int uses = 0;
  // ConnectionPool::generation() when it was opened: an older one is not pooled again.
  std::uint64_t generation = 0;
  std::chrono::steady_clock::time_point idle_since{};

 private:
  // After the TCP connection to the proxy: CONNECT host:port, and a 200 back.
  boost::asio::awaitable<Result<Ok>> open_tunnel(const HttpEndpoint& endpoint);

  std::shared_ptr<boost::asio::ssl::context> tls_ctx_;
  // Exactly one is set, by whether the endpoint is https.
  std::unique_ptr<PlainStream> plain_;
  std::unique_ptr<TlsStream> tls_;
  boost::beast::flat_buffer buffer_{kMaxReadBufferBytes};
};

}  // namespace kube
