// SPDX-License-Identifier: Apache-2.0
#include "kube/http/http_transport.h"

#include <glog/logging.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "kube/config/config_error.h"
#include "kube/config/token_source.h"
#include "kube/http/transport_error.h"

namespace kube {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
constexpr std::string_view kDefaultUserAgent = "appservice-operator/" ASOP_VERSION;

// A connection the server closed while it sat in the pool fails like this on first use.
bool stale_connection_error(const boost::system::error_code& ec) {
  return ec != beast::error::timeout && ec != asio::error::operation_aborted;
}

}  // namespace

struct HttpTransport::Exchange {
  boost::system::error_code ec;
  bool got_response_bytes = false;
  std::string failed_step;
  HttpResponse response;
  bool keep_alive = false;
};

HttpTransport::HttpTransport(asio::any_io_executor ex, RestConfig config, Options options,
                             std::shared_ptr<TokenSource> tokens,
                             std::shared_ptr<RequestMetrics> metrics)
    : ex_(std::move(ex)),
      config_(std::move(config)),
      options_(options),
      tokens_(std::move(tokens)),
      metrics_(std::move(metrics)),
      pool_(
          std::make_shared<ConnectionPool>(options_.max_idle_connections, options_.max_idle_time)) {
  CHECK(config_.scheme == "https" || config_.scheme == "http")
      << "unsupported scheme " << config_.scheme;
  if (config_.scheme == "https") {
    tls_ = std::make_unique<ClientTlsContexts>(config_);
    bool changed = false;
    tls_context_ = tls_->current(nullptr, changed);
  }
  endpoint_.host = config_.host;
  endpoint_.port = config_.port;
  endpoint_.tls = config_.scheme == "https";
  endpoint_.tls_server_name = config_.tls_server_name;
  endpoint_.proxy = config_.proxy;
  endpoint_.connect_timeout = options_.connect_timeout;
  endpoint_.handshake_timeout = options_.handshake_timeout;
  host_ = config_.authority();
  impersonate_ = impersonation_headers(config_.impersonate);
  if (!tokens_) tokens_ = std::make_shared<TokenSource>(config_);
  // A static token cannot change; a token file or an exec plugin may have a newer credential.
  refreshable_ = config_.token.empty() && (!config_.token_file.empty() || config_.exec);
}

HttpTransport::~HttpTransport() {
  pool_->clear();
}

awaitable<Result<std::unique_ptr<HttpConnection>>> HttpTransport::connect() {
  auto conn = std::make_unique<HttpConnection>(ex_, tls_context_);
  conn->generation = pool_->generation();
  auto connected = co_await conn->connect(endpoint_);
  if (!connected) co_return std::move(connected).error();
  ++connections_opened_;
  VLOG(3) << "connected to " << host_ << " (" << connections_opened_ << " connections so far)";
  co_return std::move(conn);
}

awaitable<Result<TokenSource::Credentials>> HttpTransport::authenticate() {
  try {
    co_return co_await tokens_->credentials();
  } catch (const ConfigError& e) {
    // An exec plugin or token file that worked at start-up can fail later; that is a failed
    // request, not a crash. The message names the plugin or file, never the credential.
    ApiError err =
        api_error_from_transport(std::make_error_code(std::errc::permission_denied), e.what());
    err.code = make_error_code(Errc::unauthorized);
    co_return err;
  }
}

http::request<http::string_body> HttpTransport::build(const HttpRequest& request,
                                                      const TokenSource::Credentials& credentials) {
  http::request<http::string_body> req{request.method, config_.base_path + request.target, 11};
  req.set(http::field::host, host_);
  req.set(http::field::user_agent,
          options_.user_agent.empty() ? kDefaultUserAgent : std::string_view(options_.user_agent));
  req.set(http::field::accept, "application/json");
  if (!credentials.authorization.empty()) {
    req.set(http::field::authorization, credentials.authorization);
  }
  for (const auto& [name, value] : impersonate_) req.insert(name, value);
  if (!request.content_type.empty()) req.set(http::field::content_type, request.content_type);
  req.body() = request.body;
  req.prepare_payload();
  req.keep_alive(true);
  return req;
}

awaitable<HttpTransport::Exchange> HttpTransport::exchange(
    HttpConnection& conn, http::request<http::string_body>& req,
    std::chrono::steady_clock::duration timeout) {
  Exchange ex;
  // One deadline for writing the request and reading the whole response.
  conn.tcp().expires_after(timeout);
  auto [wec, written] =
      co_await conn.visit([&](auto& s) { return http::async_write(s, req, kAwait); });
  if (wec) {
    ex.ec = wec;
    ex.failed_step = "sending";
    co_return ex;
  }
  http::response_parser<http::string_body> parser;
  parser.body_limit(options_.max_response_bytes);
  if (req.method() == http::verb::head) parser.skip(true);
  auto [rec, read] = co_await conn.visit(
      [&](auto& s) { return http::async_read(s, conn.buffer(), parser, kAwait); });
  if (rec) {
    ex.ec = rec;
    ex.failed_step = "reading the response to";
    ex.got_response_bytes = parser.got_some() || conn.buffer().size() > 0;
    co_return ex;
  }
  conn.tcp().expires_never();
  auto& res = parser.get();
  ex.response.status = res.result_int();
  ex.keep_alive = res.keep_alive();
  if (auto it = res.find(http::field::content_type); it != res.end()) {
    ex.response.content_type = std::string(it->value());
  }
  if (auto it = res.find(http::field::retry_after); it != res.end()) {
    ex.response.retry_after = std::string(it->value());
  }
  ex.response.body = std::move(res.body());
  co_return ex;
}

void HttpTransport::follow_client_certificate(const TokenSource::Credentials& credentials) {
  if (!tls_) return;
  bool changed = false;
  tls_context_ = tls_->current(credentials.exec.get(), changed);
  if (changed) pool_->retire_all();
}

ApiError HttpTransport::too_large(const std::string& what) const {
  ApiError err;
  err.code = make_error_code(Errc::response_too_large);
  const std::size_t limit = options_.max_response_bytes;
  const std::string size = limit % (1 << 20) == 0 ? std::to_string(limit >> 20) + " MiB"
                           : limit % 1024 == 0    ? std::to_string(limit >> 10) + " KiB"
                                                  : std::to_string(limit) + " bytes";
  err.message = what + ": response larger than the " + size + " limit";
  return err;
}

bool HttpTransport::refresh_credentials(const TokenSource::Credentials& used) {
  if (!refreshable_) return false;
  tokens_->invalidate(used);
  return true;
}

void HttpTransport::count(int status, const HttpRequest& request) {
  if (metrics_) metrics_->record(status, http::to_string(request.method), host_);
}

awaitable<void> HttpTransport::acquire_slot() {
  while (requests_in_flight_ >= options_.max_requests_in_flight) {
    asio::steady_timer turn(ex_, asio::steady_timer::time_point::max());
    slot_waiters_.push_back(&turn);
    // Off the queue however the wait ends (handed a slot, or the coroutine destroyed).
    struct Dequeue {
      std::deque<asio::steady_timer*>& q;
      asio::steady_timer* t;
      ~Dequeue() { std::erase(q, t); }
    } dequeue{slot_waiters_, &turn};
    co_await turn.async_wait(kAwait);
  }
  ++requests_in_flight_;
  max_requests_seen_ = std::max(max_requests_seen_, requests_in_flight_);
}

void HttpTransport::release_slot() {
  --requests_in_flight_;
  if (slot_waiters_.empty()) return;
  asio::steady_timer* next = slot_waiters_.front();
  slot_waiters_.pop_front();
  next->cancel();
}

awaitable<Result<HttpResponse>> HttpTransport::send(HttpRequest request) {
  co_await acquire_slot();
  struct Slot {
    HttpTransport* t;
    ~Slot() { t->release_slot(); }
  } slot{this};
  const auto method = http::to_string(request.method);
  bool stale_retried = false;
  bool auth_retried = false;
  for (;;) {
    auto creds = co_await authenticate();
    if (!creds) {
      count(0, request);
      co_return std::move(creds).error();
    }
    follow_client_certificate(*creds);
    // The caller's deadline bounds every attempt; past it, nothing more is sent.
    std::chrono::steady_clock::duration timeout = options_.request_timeout;
    bool deadline_bound = false;
    if (request.deadline) {
      const auto left = *request.deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) {
        count(0, request);
        ApiError e;
        e.code = make_error_code(Errc::timeout);
        e.message = "deadline exceeded before sending " + std::string(method) + " " +
                    request.target + " to " + host_;
        co_return e;
      }
      deadline_bound = left < timeout;
      timeout = std::min(timeout, left);
    }
    auto req = build(request, *creds);
    // After a stale failure every pooled connection is suspect: retry on a fresh one.
    auto conn = stale_retried ? nullptr : pool_->take();
    if (!conn) {
      auto fresh = co_await connect();
      if (!fresh) {
        count(0, request);
        co_return std::move(fresh).error();
      }
      conn = std::move(*fresh);
    }
    const bool reused = conn->uses > 0;
    ++conn->uses;
    Exchange ex = co_await exchange(*conn, req, timeout);
    if (ex.ec) {
      conn->close();
      if (reused && !ex.got_response_bytes && request.idempotent() && !stale_retried &&
          stale_connection_error(ex.ec)) {
        VLOG(2) << method << " " << request.target << ": pooled connection to " << host_
                << " failed before a response (" << ex.ec.message() << "), retrying once";
        stale_retried = true;
        continue;
      }
      count(0, request);
      std::string what =
          ex.failed_step + " " + std::string(method) + " " + request.target + " to " + host_;
      if (ex.ec == http::error::body_limit) co_return too_large(what);
      if (ex.ec == boost::beast::error::timeout && deadline_bound) {
        what = "deadline exceeded " + what;
      }
      co_return transport_error(ex.ec, what);
    }
    count(ex.response.status, request);
    VLOG(4) << method << " " << request.target << " -> " << ex.response.status;
    if (ex.keep_alive) {
      pool_->put(std::move(conn));
    } else {
      conn->close();
    }
    if (ex.response.status == 401 && !auth_retried && refresh_credentials(*creds)) {
      VLOG(1) << method << " " << request.target << ": 401 from " << host_
              << ", refreshing credentials and retrying once";
      auth_retried = true;
      continue;
    }
    co_return std::move(ex.response);
  }
}

awaitable<Result<std::unique_ptr<HttpStream>>> HttpTransport::open_stream(HttpRequest request) {
  const std::string description =
      std::string(http::to_string(request.method)) + " " + request.target + " on " + host_;
  bool auth_retried = false;
  for (;;) {
    auto creds = co_await authenticate();
    if (!creds) {
      count(0, request);
      co_return std::move(creds).error();
    }
    follow_client_certificate(*creds);
    auto req = build(request, *creds);
    // A stream holds its connection for minutes: never take one from the pool for it.
    auto fresh = co_await connect();
    if (!fresh) {
      count(0, request);
      co_return std::move(fresh).error();
    }
    std::unique_ptr<HttpConnection> conn = std::move(*fresh);
    ++conn->uses;
    conn->tcp().expires_after(options_.request_timeout);
    auto [wec, written] =
        co_await conn->visit([&](auto& s) { return http::async_write(s, req, kAwait); });
    if (wec) {
      conn->close();
      count(0, request);
      co_return transport_error(wec, "sending " + description);
    }
    auto stream = std::make_unique<HttpStream>(std::move(conn), pool_, description);
    auto header = co_await stream->read_header(options_.request_timeout);
    if (!header) {
      count(0, request);
      co_return std::move(header).error();
    }
    count(stream->status(), request);
    VLOG(3) << description << " -> " << stream->status() << " (streaming)";
    if (stream->status() == 401 && !auth_retried && refresh_credentials(*creds)) {
      VLOG(1) << description << ": 401, refreshing credentials and retrying once";
      auth_retried = true;
      stream->cancel();
      continue;
    }
    co_return std::move(stream);
  }
}

}  // namespace kube
