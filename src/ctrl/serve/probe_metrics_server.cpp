// SPDX-License-Identifier: Apache-2.0
#include "ctrl/serve/probe_metrics_server.h"

#include <glog/logging.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cctype>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "ctrl/base/exception_text.h"
#include "ctrl/serve/bind_address.h"

namespace ctrl {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::ip::tcp;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
constexpr std::string_view kTextPlain = "text/plain; charset=utf-8";

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

Response text_response(http::status status, std::string body,
                       std::string_view content_type = kTextPlain) {
  Response res{status, 11};
  res.set(http::field::content_type, content_type);
  // Go's healthz handler sets it too: the body is plain text, never to be sniffed as HTML.
  res.set("X-Content-Type-Options", "nosniff");
  res.body() = std::move(body);
  return res;
}

std::string seconds_text(Clock::Duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + "s";
}

void log_exception(std::exception_ptr e, const char* what) {
  if (e) LOG(ERROR) << what << ": " << exception_text(e);
}

}  // namespace

struct ProbeMetricsServer::Core {
  Core(asio::any_io_executor e, Options o, const Clock& c, const MetricsRegistry* m)
      : ex(std::move(e)), options(std::move(o)), clock(c), metrics(m), ticker(ex) {}

  struct NamedCheck {
    std::string name;
    Check check;
  };

  asio::any_io_executor ex;
  Options options;
  const Clock& clock;
  const MetricsRegistry* metrics;
  std::vector<NamedCheck> healthz;
  std::vector<NamedCheck> readyz;
  std::optional<tcp::acceptor> acceptor;
  asio::steady_timer ticker;
  Clock::TimePoint heartbeat{};
  // Open connections: who, in what order they came, and whether a response is being made for
  // one (those are never evicted). Evicted ones are closed and leave when their coroutine ends.
  struct Connection {
    asio::ip::address peer;
    std::uint64_t order = 0;
    bool serving = false;
    bool evicted = false;
  };
  std::map<beast::tcp_stream*, Connection> streams;
  std::uint64_t accepted = 0;
  bool started = false;
  bool stopped = false;
  std::function<void(const std::string&)> on_failure;

  void add(beast::tcp_stream* stream) {
    boost::system::error_code ec;
    streams[stream] = Connection{stream->socket().remote_endpoint(ec).address(), ++accepted};
  }
  // Open (not evicted) connections, of one peer or of all.
  std::size_t count(const asio::ip::address* peer) const {
    std::size_t n = 0;
    for (const auto& [stream, c] : streams) n += !c.evicted && (!peer || c.peer == *peer);
    return n;
  }
  // Closes the oldest connection (of `peer`, or of anyone) that waits for a request; false when
  // every one is busy making a response.
  bool evict(const asio::ip::address* peer) {
    beast::tcp_stream* oldest = nullptr;
    std::uint64_t order = 0;
    for (auto& [stream, c] : streams) {
      if (c.evicted || c.serving || (peer && c.peer != *peer)) continue;
      if (!oldest || c.order < order) oldest = stream, order = c.order;
    }
    if (!oldest) return false;
    auto& c = streams[oldest];
    c.evicted = true;
    VLOG(2) << "probe and metrics server: evicting the oldest waiting connection of " << c.peer;
    boost::system::error_code ignored;
    oldest->socket().shutdown(tcp::socket::shutdown_both, ignored);
    oldest->socket().close(ignored);
    return true;
  }

  // Each coroutine holds the core, so the core outlives the ProbeMetricsServer until they end.
  static awaitable<void> tick(std::shared_ptr<Core> core);
  static awaitable<void> accept_loop(std::shared_ptr<Core> core);
  static awaitable<void> serve(std::shared_ptr<Core> core, tcp::socket socket);
  template <class Stream>
  static awaitable<void> serve_requests(std::shared_ptr<Core> core, Stream& stream);
  static awaitable<Response> respond(std::shared_ptr<Core> core, const Request& req);

  // The built-in liveness check. A blocked loop cannot answer at all (the probe times out); a
  // starved or repeatedly blocked one answers late, and then the heartbeat shows it.
  std::optional<std::string> event_loop_failure() const {
    const auto age = clock.now() - heartbeat;
    if (age <= options.stall_threshold) return std::nullopt;
    return "no event loop heartbeat for " + seconds_text(age);
  }

  // Runs the checks (all, or the one named by `only`) in controller-runtime's format: "ok", or
  // one "[-]name failed" line per failure. Empty optional: no check has that name.
  std::optional<Response> run_checks(std::string_view kind, const std::vector<NamedCheck>& checks,
                                     bool with_event_loop, std::string_view only,
                                     http::status fail_status) const {
    std::string failures;
    bool found = only.empty();
    if (with_event_loop && (only.empty() || only == "event-loop")) {
      found = true;
      if (auto why = event_loop_failure()) failures += "[-]event-loop failed: " + *why + "\n";
    }
    for (const auto& c : checks) {
      if (!only.empty() && c.name != only) continue;
      found = true;
      bool ok = false;
      try {
        ok = c.check();
      } catch (const std::exception& e) {
        LOG(WARNING) << kind << " check " << c.name << " threw: " << e.what();
      } catch (...) {
        LOG(WARNING) << kind << " check " << c.name << " threw";
      }
      if (!ok) failures += "[-]" + c.name + " failed\n";
    }
    if (!found) return std::nullopt;
    if (failures.empty()) return text_response(http::status::ok, "ok");
    VLOG(1) << kind << " failing: " << failures;
    return text_response(fail_status, failures + std::string(kind) + " check failed\n");
  }

  Response handle(const Request& req) const {
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      auto res = text_response(http::status::method_not_allowed, "method not allowed\n");
      res.set(http::field::allow, "GET, HEAD");
      return res;
    }
    const std::string_view path = request_path(req);
    auto probe = [&](std::string_view prefix, std::string_view& only) {
      if (path == prefix) return true;
      if (path.size() > prefix.size() + 1 && path.starts_with(prefix) &&
          path[prefix.size()] == '/') {
        only = path.substr(prefix.size() + 1);
        return only.find('/') == std::string_view::npos;
      }
      return false;
    };
    std::string_view only;
    std::optional<Response> res;
    if (probe("/healthz", only)) {
      res = run_checks("healthz", healthz, true, only, http::status::internal_server_error);
    } else if (probe("/readyz", only)) {
      res = run_checks("readyz", readyz, false, only, http::status::service_unavailable);
    } else if (path == "/metrics" && metrics != nullptr) {
      res = text_response(http::status::ok, metrics->render(), MetricsRegistry::kContentType);
    }
    if (!res) res = text_response(http::status::not_found, "404 page not found\n");
    return std::move(*res);
  }

  // The target without its query and one trailing slash: what both routing and the metrics
  // filter match on, so they cannot disagree about which requests are /metrics.
  static std::string_view request_path(const Request& req) {
    std::string_view path = req.target();
    if (auto q = path.find('?'); q != std::string_view::npos) path = path.substr(0, q);
    if (path.ends_with('/') && path.size() > 1) path.remove_suffix(1);
    return path;
  }

  static bool is_metrics(const Request& req) { return request_path(req) == "/metrics"; }
};

// Status codes and texts as controller-runtime's filters answer them.
awaitable<Response> ProbeMetricsServer::Core::respond(std::shared_ptr<Core> core,
                                                      const Request& req) {
  auto* authorizer = core->options.metrics_authorizer;
  if (authorizer == nullptr || core->metrics == nullptr || !is_metrics(req) ||
      (req.method() != http::verb::get && req.method() != http::verb::head)) {
    co_return core->handle(req);
  }
  std::string verb(req.method_string());
  std::transform(verb.begin(), verb.end(), verb.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto verdict = co_await authorizer->authorize(std::string(req[http::field::authorization]),
                                                      "/metrics", verb);
  switch (verdict) {
    case RequestAuthorizer::Verdict::allowed:
      co_return core->handle(req);
    case RequestAuthorizer::Verdict::unauthenticated: {
      auto res = text_response(http::status::unauthorized, "Unauthorized\n");
      res.set(http::field::www_authenticate, "Bearer");
      co_return res;
    }
    case RequestAuthorizer::Verdict::forbidden:
      co_return text_response(http::status::forbidden, "Forbidden\n");
    case RequestAuthorizer::Verdict::busy: {
      auto res = text_response(http::status::too_many_requests, "Too many reviews in flight\n");
      res.set(http::field::retry_after, "1");
      co_return res;
    }
    case RequestAuthorizer::Verdict::error:
      break;
  }
  co_return text_response(http::status::internal_server_error, "Authorization failed\n");
}

ProbeMetricsServer::ProbeMetricsServer(asio::any_io_executor ex, Options options,
                                       const Clock& clock, const MetricsRegistry* metrics)
    : core_(std::make_shared<Core>(std::move(ex), std::move(options), clock, metrics)) {
  CHECK(core_->options.heartbeat_interval.count() > 0);
}

ProbeMetricsServer::~ProbeMetricsServer() {
  stop();
}

void ProbeMetricsServer::add_healthz_check(std::string name, Check check) {
  CHECK(check) << "healthz check " << name << " is empty";
  core_->healthz.push_back({std::move(name), std::move(check)});
}

void ProbeMetricsServer::add_readyz_check(std::string name, Check check) {
  CHECK(check) << "readyz check " << name << " is empty";
  core_->readyz.push_back({std::move(name), std::move(check)});
}

void ProbeMetricsServer::on_failure(std::function<void(const std::string&)> handler) {
  core_->on_failure = std::move(handler);
}

void ProbeMetricsServer::start() {
  CHECK(!core_->started) << "ProbeMetricsServer::start() is called once";
  core_->started = true;
  const auto endpoint = parse_bind_address(core_->options.bind_address);
  if (!endpoint) {
    LOG(INFO) << "health/metrics server disabled (bind address \"0\")";
    return;
  }
  tcp::acceptor acceptor(core_->ex);
  boost::system::error_code ec;
  acceptor.open(endpoint->protocol(), ec);
  tcp::endpoint bind_to = *endpoint;
  if (!ec && endpoint->address().is_v6() && endpoint->address().is_unspecified()) {
    acceptor.set_option(asio::ip::v6_only(false), ec);  // ":port" means IPv4 too, as in Go
  }
  if (ec && endpoint->address().is_v6() && endpoint->address().is_unspecified()) {
    // No IPv6 on this host: every IPv4 interface instead.
    acceptor = tcp::acceptor(core_->ex);
    bind_to = tcp::endpoint(asio::ip::address_v4::any(), endpoint->port());
    acceptor.open(bind_to.protocol());
  } else if (ec) {
    throw boost::system::system_error(ec, "opening a socket for " + core_->options.bind_address);
  }
  acceptor.set_option(asio::socket_base::reuse_address(true));
  acceptor.bind(bind_to, ec);
  if (ec) throw boost::system::system_error(ec, "binding " + core_->options.bind_address);
  acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw boost::system::system_error(ec, "listening on " + core_->options.bind_address);
  core_->acceptor.emplace(std::move(acceptor));
  core_->heartbeat = core_->clock.now();
  LOG(INFO) << "serving /healthz, /readyz" << (core_->metrics ? ", /metrics" : "") << " on "
            << core_->acceptor->local_endpoint();

  auto supervise = [core = core_](const char* what) {
    return [core, what](std::exception_ptr e) {
      log_exception(e, what);
      if (core->stopped || !core->on_failure) return;
      core->on_failure(std::string(what) + (e ? " failed" : " ended before stop()"));
    };
  };
  asio::co_spawn(core_->ex, Core::tick(core_), supervise("probe and metrics server heartbeat"));
  asio::co_spawn(core_->ex, Core::accept_loop(core_),
                 supervise("probe and metrics server accept loop"));
}

void ProbeMetricsServer::stop() {
  auto& core = *core_;
  if (core.stopped) return;
  core.stopped = true;
  boost::system::error_code ec;
  core.ticker.cancel();
  if (core.acceptor) core.acceptor->close(ec);
  // Each connection's coroutine wakes with an error and removes itself.
  for (auto& [stream, connection] : core.streams) {
    stream->socket().shutdown(tcp::socket::shutdown_both, ec);
    stream->socket().close(ec);
  }
}

bool ProbeMetricsServer::enabled() const {
  return core_->acceptor.has_value();
}

unsigned short ProbeMetricsServer::port() const {
  if (!core_->acceptor || !core_->acceptor->is_open()) return 0;
  boost::system::error_code ec;
  const auto ep = core_->acceptor->local_endpoint(ec);
  return ec ? 0 : ep.port();
}

std::size_t ProbeMetricsServer::open_connections() const {
  std::size_t open = 0;
  for (const auto& [stream, connection] : core_->streams) open += connection.evicted ? 0 : 1;
  return open;
}

Clock::TimePoint ProbeMetricsServer::last_heartbeat() const {
  return core_->heartbeat;
}

awaitable<void> ProbeMetricsServer::Core::tick(std::shared_ptr<Core> core) {
  while (!core->stopped) {
    core->heartbeat = core->clock.now();
    core->ticker.expires_after(core->options.heartbeat_interval);
    co_await core->ticker.async_wait(kAwait);
  }
}

awaitable<void> ProbeMetricsServer::Core::accept_loop(std::shared_ptr<Core> core) {
  asio::steady_timer pause(core->ex);
  while (!core->stopped) {
    auto [ec, socket] = co_await core->acceptor->async_accept(kAwait);
    if (core->stopped) break;
    if (ec) {
      // Out of descriptors and the like: pause instead of spinning on the error.
      LOG(WARNING) << "probe and metrics server accept failed: " << ec.message();
      pause.expires_after(std::chrono::milliseconds(100));
      co_await pause.async_wait(kAwait);
      continue;
    }
    // Room for the newcomer: a peer over its share, or a full server, loses its oldest
    // connection that is waiting for a request (idle or half-read). Holding every slot therefore
    // cannot lock out the kubelet: each probe takes the slot of the oldest waiting connection.
    boost::system::error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec).address();
    bool room = true;
    if (core->count(&peer) >= core->options.max_connections_per_peer) room = core->evict(&peer);
    if (room && core->count(nullptr) >= core->options.max_connections) room = core->evict(nullptr);
    if (!room) {
      VLOG(1) << "probe and metrics server: every connection is busy; refusing one from " << peer;
      boost::system::error_code ignored;
      socket.close(ignored);
      continue;
    }
    asio::co_spawn(core->ex, serve(core, std::move(socket)), [](std::exception_ptr e) {
      log_exception(e, "probe and metrics server connection");
    });
  }
}

awaitable<void> ProbeMetricsServer::Core::serve(std::shared_ptr<Core> core, tcp::socket socket) {
  boost::system::error_code ignored;
  if (!core->options.tls_context) {
    beast::tcp_stream stream(std::move(socket));
    core->add(&stream);
    co_await serve_requests(core, stream);
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream.socket().close(ignored);
    core->streams.erase(&stream);
    co_return;
  }
  // The context stays alive with the connection, whatever a rotation does meanwhile.
  const auto context = core->options.tls_context();
  beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *context);
  auto& lowest = beast::get_lowest_layer(stream);
  core->add(&lowest);
  core->streams[&lowest].serving = true;  // not evicted mid-handshake: it costs CPU to redo
  lowest.expires_after(core->options.handshake_timeout);
  auto [ec] = co_await stream.async_handshake(asio::ssl::stream_base::server, kAwait);
  core->streams[&lowest].serving = false;
  if (!ec && !core->stopped) {
    co_await serve_requests(core, stream);
  } else if (ec) {
    VLOG(2) << "metrics TLS handshake failed: " << ec.message();
  }
  lowest.socket().shutdown(tcp::socket::shutdown_both, ignored);
  lowest.socket().close(ignored);
  core->streams.erase(&lowest);
}

template <class Stream>
awaitable<void> ProbeMetricsServer::Core::serve_requests(std::shared_ptr<Core> core,
                                                         Stream& stream) {
  const auto& options = core->options;
  auto& lowest = beast::get_lowest_layer(stream);
  // The buffer never grows past a maximal request, so a client cannot make us buffer more.
  beast::flat_buffer buffer(options.max_header_bytes + options.max_body_bytes);
  while (!core->stopped) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
    parser.body_limit(options.max_body_bytes);
    // The first byte and the headers have a short deadline, the whole request a longer one.
    lowest.expires_after(std::min(options.header_timeout, options.read_timeout));
    auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, kAwait);
    if (!ec && !parser.is_done()) {
      lowest.expires_after(options.read_timeout);
      auto [bec, bn] = co_await http::async_read(stream, buffer, parser, kAwait);
      ec = bec;
      n += bn;
    }
    if (core->stopped) break;
    if (!ec) core->streams[&lowest].serving = true;
    std::optional<Response> res;
    bool keep_alive = false;
    if (!ec) {
      const auto& req = parser.get();
      res = co_await respond(core, req);
      if (core->stopped) break;
      keep_alive = req.keep_alive();
      if (req.method() == http::verb::head) {
        res->prepare_payload();
        const auto length = res->body().size();
        res->body().clear();
        res->content_length(length);
      }
    } else if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      res = text_response(http::status::request_header_fields_too_large, "request too large\n");
    } else if (ec == http::error::body_limit) {
      res = text_response(http::status::payload_too_large, "request too large\n");
    } else if (ec != http::error::end_of_stream && ec != beast::error::timeout &&
               ec != asio::error::operation_aborted && ec != asio::error::connection_reset &&
               ec != asio::error::eof && n > 0) {
      res = text_response(http::status::bad_request, "bad request\n");
    }
    if (!res) break;  // closed, timed out, or nothing parseable: just close
    res->keep_alive(keep_alive);
    if (res->body().size() > 0 || !res->has_content_length()) res->prepare_payload();
    lowest.expires_after(options.write_timeout);
    auto [wec, written] = co_await http::async_write(stream, *res, kAwait);
    (void)written;
    if (wec || !keep_alive) break;
    core->streams[&lowest].serving = false;
  }
}

}  // namespace ctrl
