// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "kube/core/result.h"
#include "kube/http/connection_pool.h"
#include "kube/http/http_connection.h"

namespace kube {

// A response whose body is read incrementally (watches). The body has no size limit, and every
// read must complete within the idle timeout, so a half-open connection (HTTP/1.1 has no pings)
// fails with Errc::timeout instead of hanging forever. The stream owns its connection; it goes back
// to the pool only when the body ended cleanly and the server allows keep-alive.
class HttpStream {
 public:
  HttpStream(std::unique_ptr<HttpConnection> conn, std::weak_ptr<ConnectionPool> pool,
             std::string description);
  ~HttpStream();
  HttpStream(const HttpStream&) = delete;
  HttpStream& operator=(const HttpStream&) = delete;

  // Reads the status line and headers; each read within `timeout`. Used by HttpTransport.
  boost::asio::awaitable<Result<Ok>> read_header(std::chrono::milliseconds timeout);

  int status() const { return parser_.get().result_int(); }
  std::string header(std::string_view name) const;

  // The next bytes of the body, as they arrive (chunk boundaries are not preserved). An empty view
  // means the body ended cleanly. The view is valid until the next call.
  boost::asio::awaitable<Result<std::string_view>> read_some(
      std::chrono::milliseconds idle_timeout);
  // The rest of the body, at most max_bytes (more is an error): for error responses.
  boost::asio::awaitable<Result<std::string>> read_all(std::chrono::milliseconds idle_timeout,
                                                       std::size_t max_bytes);

  bool done() const { return parser_.is_done(); }
  // For shutdown: closes the socket, so a pending read_some completes at once with an error. Safe
  // to call at any time, more than once.
  void cancel();
  bool cancelled() const { return cancelled_; }

 private:
  std::unique_ptr<HttpConnection> conn_;
  std::weak_ptr<ConnectionPool> pool_;
  std::string description_;  // "GET /api/v1/pods?watch=1 on host:port", for errors
  boost::beast::http::response_parser<boost::beast::http::buffer_body> parser_;
  // Body bytes are copied here from the connection's read buffer, which holds the rest until the
  // next call. Not zeroed: a watch stream lives as long as its informer, and its pages should
  // be touched only by what arrives. 64 KiB, zeroed, took 192 KiB for three informers.
  std::array<char, 16 * 1024> chunk_;
  bool cancelled_ = false;
  bool failed_ = false;
};

}  // namespace kube
