// SPDX-License-Identifier: Apache-2.0
#include "kube/http/http_stream.h"

#include <glog/logging.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>

#include "kube/http/transport_error.h"

namespace kube {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::awaitable;

namespace {
constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
}

HttpStream::HttpStream(std::unique_ptr<HttpConnection> conn, std::weak_ptr<ConnectionPool> pool,
                       std::string description)
    : conn_(std::move(conn)), pool_(std::move(pool)), description_(std::move(description)) {
  // A watch body is unbounded; the 8 MB default would cut a long watch.
  parser_.body_limit(boost::none);
}

HttpStream::~HttpStream() {
  if (!conn_) return;
  auto pool = pool_.lock();
  if (pool && !cancelled_ && !failed_ && parser_.is_done() && parser_.keep_alive()) {
    conn_->tcp().expires_never();
    pool->put(std::move(conn_));
  } else {
    conn_->close();
  }
}

std::string HttpStream::header(std::string_view name) const {
  const auto& fields = parser_.get();
  auto it = fields.find(name);
  return it == fields.end() ? std::string() : std::string(it->value());
}

awaitable<Result<Ok>> HttpStream::read_header(std::chrono::milliseconds timeout) {
  conn_->tcp().expires_after(timeout);
  auto [ec, n] = co_await conn_->visit(
      [&](auto& s) { return http::async_read_header(s, conn_->buffer(), parser_, kAwait); });
  if (ec) {
    failed_ = true;
    conn_->close();
    co_return transport_error(ec, "reading the response to " + description_);
  }
  co_return Ok{};
}

awaitable<Result<std::string_view>> HttpStream::read_some(std::chrono::milliseconds idle_timeout) {
  for (;;) {
    if (cancelled_) co_return transport_error(asio::error::operation_aborted, description_);
    if (failed_) co_return transport_error(asio::error::not_connected, description_);
    if (parser_.is_done()) co_return std::string_view{};
    auto& body = parser_.get().body();
    body.data = chunk_.data();
    body.size = chunk_.size();
    // The deadline is per read: a watch may legitimately stay open for minutes, but the server
    // sends bookmarks or data well within the idle timeout on a healthy connection.
    conn_->tcp().expires_after(idle_timeout);
    auto [ec, n] = co_await conn_->visit(
        [&](auto& s) { return http::async_read_some(s, conn_->buffer(), parser_, kAwait); });
    if (ec == http::error::need_buffer) ec = {};
    if (ec) {
      failed_ = true;
      conn_->close();
      if (cancelled_) co_return transport_error(asio::error::operation_aborted, description_);
      co_return transport_error(ec, "reading the body of " + description_);
    }
    const std::size_t got = chunk_.size() - parser_.get().body().size;
    if (got > 0) co_return std::string_view(chunk_.data(), got);
    // Only framing (a chunk header, trailers) was parsed: read on.
  }
}

awaitable<Result<std::string>> HttpStream::read_all(std::chrono::milliseconds idle_timeout,
                                                    std::size_t max_bytes) {
  std::string out;
  for (;;) {
    auto piece = co_await read_some(idle_timeout);
    if (!piece) co_return std::move(piece).error();
    if (piece->empty()) co_return out;
    if (out.size() + piece->size() > max_bytes) {
      failed_ = true;
      conn_->close();
      co_return transport_error(http::error::body_limit, "reading the body of " + description_);
    }
    out.append(*piece);
  }
}

void HttpStream::cancel() {
  if (cancelled_) return;
  cancelled_ = true;
  if (conn_) conn_->close();
}

}  // namespace kube
