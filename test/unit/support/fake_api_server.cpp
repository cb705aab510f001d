// SPDX-License-Identifier: Apache-2.0
#include "support/fake_api_server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "kube/api/rest_client.h"
#include "kube/http/http_transport.h"
#include "kube/http/request_metrics.h"

namespace kube::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;

namespace {
constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

std::string field(const http::request<http::string_body>& req, http::field f) {
  auto it = req.find(f);
  return it == req.end() ? std::string() : std::string(it->value());
}
}  // namespace

FakeApiServer::FakeApiServer(asio::io_context& io, Handler handler)
    : io_(io),
      handler_(std::move(handler)),
      acceptor_(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
  port_ = acceptor_.local_endpoint().port();
  asio::co_spawn(io_, accept_loop(), asio::detached);
}

FakeApiServer::~FakeApiServer() {
  stop();
}

std::string FakeApiServer::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

void FakeApiServer::stop() {
  stopped_ = true;
  boost::system::error_code ec;
  acceptor_.close(ec);
  for (auto& weak : open_) {
    if (auto s = weak.lock()) {
      s->socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
      s->close();
    }
  }
  open_.clear();
}

awaitable<void> FakeApiServer::accept_loop() {
  for (;;) {
    auto [ec, sock] = co_await acceptor_.async_accept(kAwait);
    if (ec || stopped_) co_return;
    auto stream = std::make_shared<beast::tcp_stream>(std::move(sock));
    open_.push_back(stream);
    asio::co_spawn(io_, serve(stream, ++connections_), asio::detached);
  }
}

awaitable<void> FakeApiServer::serve(std::shared_ptr<beast::tcp_stream> stream, int index) {
  beast::flat_buffer buffer;
  for (int n = 1;; ++n) {
    http::request<http::string_body> req;
    auto [ec, bytes] = co_await http::async_read(*stream, buffer, req, kAwait);
    if (ec) co_return;
    Request seen{req.method(),
                 std::string(req.target()),
                 req.body(),
                 field(req, http::field::authorization),
                 field(req, http::field::content_type),
                 field(req, http::field::user_agent),
                 field(req, http::field::accept),
                 index,
                 n,
                 {}};
    for (const auto& f : req) seen.headers.emplace_back(f.name_string(), f.value());
    seen_.push_back(seen);
    Reply reply = handler_(seen);
    if (reply.kind == Reply::Kind::close) {
      stream->socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
      stream->close();
      co_return;
    }
    if (reply.kind == Reply::Kind::hang) {
      // Read until the client gives up and closes (or stop()): nothing is ever answered.
      char sink[256];
      for (;;) {
        auto [rec, n2] = co_await stream->socket().async_read_some(asio::buffer(sink), kAwait);
        if (rec) co_return;
      }
    }
    if (reply.kind == Reply::Kind::stream) {
      http::response<http::empty_body> res{static_cast<http::status>(reply.status), 11};
      res.set(http::field::content_type, "application/json");
      for (const auto& [k, v] : reply.headers) res.set(k, v);
      res.chunked(true);
      res.keep_alive(reply.keep_alive);
      http::response_serializer<http::empty_body> sr{res};
      auto [hec, hn] = co_await http::async_write_header(*stream, sr, kAwait);
      if (hec) co_return;
      for (const auto& chunk : reply.chunks) {
        auto [cec, cn] =
            co_await asio::async_write(*stream, http::make_chunk(asio::buffer(chunk)), kAwait);
        if (cec) co_return;
      }
      if (reply.stall) {
        char sink[256];
        for (;;) {
          auto [rec, n2] = co_await stream->socket().async_read_some(asio::buffer(sink), kAwait);
          if (rec) co_return;
        }
      }
      auto [lec, ln] = co_await asio::async_write(*stream, http::make_chunk_last(), kAwait);
      if (lec || !reply.keep_alive) co_return;
      continue;
    }
    http::response<http::string_body> res{static_cast<http::status>(reply.status), 11};
    res.set(http::field::content_type, "application/json");
    for (const auto& [k, v] : reply.headers) res.set(k, v);
    res.body() = reply.body;
    res.keep_alive(reply.keep_alive);
    res.prepare_payload();
    auto [wec, wn] = co_await http::async_write(*stream, res, kAwait);
    if (wec) co_return;
    if (!reply.keep_alive) {
      stream->socket().shutdown(asio::ip::tcp::socket::shutdown_both, wec);
      stream->close();
      co_return;
    }
  }
}

std::shared_ptr<RestClient> rest_client_for(asio::io_context& io, const FakeApiServer& server) {
  RestConfig c;
  c.scheme = "http";
  c.host = "127.0.0.1";
  c.port = std::to_string(server.port());
  return std::make_shared<RestClient>(std::make_shared<HttpTransport>(
      io.get_executor(), c, HttpTransport::Options{}, nullptr, std::make_shared<RequestMetrics>()));
}

}  // namespace kube::testing
