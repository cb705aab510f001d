// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/kube/http/: the transport: TLS contexts and client certificates, connections, the
// keep-alive pool, streams, deadlines, transport errors, per-request metrics hook. May use:
// src/kube/config/, src/kube/core/ (the Rooms table in docs/architecture.md).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kube/config/rest_config.h"
#include "kube/config/token_source.h"
#include "kube/core/result.h"
#include "kube/http/client_certificate.h"
#include "kube/http/connection_pool.h"
#include "kube/http/http_connection.h"
#include "kube/http/http_request.h"
#include "kube/http/http_response.h"
#include "kube/http/http_stream.h"
#include "kube/http/request_metrics.h"

namespace kube {

// HTTP/1.1 to one API server over Boost.Beast (+ OpenSSL for https): authentication headers, a
// pool of keep-alive connections, deadlines on every phase, and the two retries client-go's
// transport makes (a stale pooled connection for idempotent verbs; a 401 with a refreshable
// credential). Impersonate-* headers go on every request when the config impersonates. Runs on one
// io_context thread; no locks. Never logs headers or credentials.
class HttpTransport {
 public:
  struct Options {
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
    std::chrono::milliseconds handshake_timeout{std::chrono::seconds(10)};
    // Write plus complete response of a non-streaming request; the header of a streaming one.
    std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};
    std::size_t max_idle_connections = 8;
    // The API server closes idle connections after a while; don't hand out older ones.
    std::chrono::milliseconds max_idle_time{std::chrono::seconds(60)};
    // A single response (a list page) larger than this is refused (Errc::response_too_large). It is
    // held as text and then parsed into a DOM of about the same size again, so 16 MiB keeps a page
    // well inside deploy/base's 128 MiB memory limit; etcd stores objects of at most ~1.5 MiB.
    std::size_t max_response_bytes = std::size_t{16} << 20;
    // Requests (not watches) in flight at once, so at most this many request connections: past
    // it a burst queues for a connection instead of opening a TCP+TLS handshake per request.
    std::size_t max_requests_in_flight = 32;
    // Who is asking, as the API server's audit log and client metrics show it: the program built
    // on this client, "NAME/VERSION" (ctrl::App sets its own). Empty:
    // "appservice-operator/VERSION".
    std::string user_agent;
  };

  // Builds the TLS context for https servers (throws ConfigError at start-up when the CA or client
  // certificate is unusable). `tokens` null: one is made from `config` (token, token file, exec
  // plugin, basic auth, or nothing for client-certificate auth). `metrics` may be null.
  HttpTransport(boost::asio::any_io_executor ex, RestConfig config, Options options,
                std::shared_ptr<TokenSource> tokens, std::shared_ptr<RequestMetrics> metrics);
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;
  ~HttpTransport();

  // Sends one request and reads the whole response. Any HTTP status is a response; an ApiError
  // means no (complete) response: Errc::timeout past a deadline, Errc::unavailable otherwise.
  boost::asio::awaitable<Result<HttpResponse>> send(HttpRequest request);

  // Sends a request on a new connection of its own and returns once the response header is read;
  // the caller reads the body incrementally. Any status is returned as a stream.
  boost::asio::awaitable<Result<std::unique_ptr<HttpStream>>> open_stream(HttpRequest request);

  const RestConfig& config() const { return config_; }
  const Options& options() const { return options_; }
  // host:port, the `host` label of rest_client_requests_total.
  const std::string& host() const { return host_; }
  // Connections opened so far (tests check keep-alive reuse with it).
  std::size_t connections_opened() const { return connections_opened_; }
  // The most requests that were in flight at once (never above max_requests_in_flight).
  std::size_t max_requests_seen() const { return max_requests_seen_; }
  std::size_t idle_connections() const { return pool_->idle(); }
  // Closes idle pooled connections (shutdown).
  void close_idle() { pool_->clear(); }

 private:
  struct Exchange;

  boost::asio::awaitable<Result<std::unique_ptr<HttpConnection>>> connect();
  // Picks the TLS context for a request with `credentials`; when the client certificate changed,
  // pooled connections (made with the old one) are retired.
  void follow_client_certificate(const TokenSource::Credentials& credentials);
  // The credentials for the next request; a failing exec plugin or token file is an error result.
  boost::asio::awaitable<Result<TokenSource::Credentials>> authenticate();
  // The request as sent: method, target with the base path, transport and auth headers.
  boost::beast::http::request<boost::beast::http::string_body> build(
      const HttpRequest& request, const TokenSource::Credentials& credentials);
  boost::asio::awaitable<Exchange> exchange(
      HttpConnection& conn, boost::beast::http::request<boost::beast::http::string_body>& req,
      std::chrono::steady_clock::duration timeout);
  // The error for a response body over options_.max_response_bytes.
  ApiError too_large(const std::string& what) const;
  // After a 401 to a request made with `used`: whether a newer credential may exist, so the
  // request is worth one more try.
  bool refresh_credentials(const TokenSource::Credentials& used);
  void count(int status, const HttpRequest& request);
  // Waits for one of options_.max_requests_in_flight slots; release_slot() hands it on in order.
  boost::asio::awaitable<void> acquire_slot();
  void release_slot();

  boost::asio::any_io_executor ex_;
  RestConfig config_;
  Options options_;
  std::shared_ptr<TokenSource> tokens_;
  std::shared_ptr<RequestMetrics> metrics_;
  std::unique_ptr<ClientTlsContexts> tls_;                  // null for http
  std::shared_ptr<boost::asio::ssl::context> tls_context_;  // for new connections
  std::shared_ptr<ConnectionPool> pool_;
  HttpEndpoint endpoint_;
  std::string host_;
  std::vector<std::pair<std::string, std::string>> impersonate_;  // Impersonate-* headers
  bool refreshable_ = false;
  std::size_t connections_opened_ = 0;
  std::size_t requests_in_flight_ = 0;
  std::size_t max_requests_seen_ = 0;
  std::deque<boost::asio::steady_timer*> slot_waiters_;  // first come, first served
};

}  // namespace kube
