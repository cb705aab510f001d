// SPDX-License-Identifier: Apache-2.0
// asop::testing::FaultProxy: a TLS-terminating HTTP/1.1 proxy with fault rules (from
// test/tools/slow_watch_proxy.cpp, in process).
#include "asop/testing/fault_proxy.h"

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace asop::testing {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
namespace http = boost::beast::http;
using asio::awaitable;
using asio::ip::tcp;
using Stream = ssl::stream<tcp::socket>;
constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

bool is_watch(std::string_view target) {
  const auto q = target.find('?');
  if (q == std::string_view::npos) return false;
  const std::string query = "&" + std::string(target.substr(q + 1)) + "&";
  return query.find("&watch=true&") != std::string::npos ||
         query.find("&watch=1&") != std::string::npos;
}

std::string reason_of(int status) {
  switch (status) {
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    default:
      return "Unknown";
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

void close(Stream& stream) {
  boost::system::error_code ignored;
  stream.lowest_layer().shutdown(tcp::socket::shutdown_both, ignored);
  stream.lowest_layer().close(ignored);
}

// The response bytes after the request went on, for a watch or a rule's delay, stall or cut.
awaitable<void> relay(std::shared_ptr<Stream> client, std::shared_ptr<Stream> upstream,
                      std::optional<FaultRule> rule) {
  using Action = FaultRule::Action;
  auto ex = client->get_executor();
  if (rule && rule->action == Action::stall) {
    // Nothing more reaches the client; it gives up (its timeout) or goes away.
    char byte;
    (void)co_await client->async_read_some(asio::buffer(&byte, 1), kAwait);
    close(*upstream);
    close(*client);
    co_return;
  }
  asio::steady_timer cut(ex);
  if (rule && rule->action == Action::cut) {
    cut.expires_after(rule->delay);
    cut.async_wait([client, upstream](boost::system::error_code ec) {
      if (ec) return;
      close(*upstream);
      close(*client);
    });
  }
  const auto delay =
      rule && rule->action == Action::delay ? rule->delay : std::chrono::milliseconds(0);
  // Bytes read from the upstream as they come, each written `delay` after it came: a reader here
  // and a writer coroutine, so a stream of events is shifted, not spread out.
  struct Line {
    explicit Line(asio::any_io_executor e) : signal(e, asio::steady_timer::time_point::max()) {}
    std::deque<std::pair<std::chrono::steady_clock::time_point, std::string>> pieces;
    bool ended = false;
    asio::steady_timer signal;
  };
  auto line = std::make_shared<Line>(ex);
  asio::co_spawn(
      ex,
      [client, upstream, line]() -> awaitable<void> {
        for (;;) {
          if (line->pieces.empty()) {
            if (line->ended) break;
            line->signal.expires_at(asio::steady_timer::time_point::max());
            (void)co_await line->signal.async_wait(kAwait);
            continue;
          }
          auto piece = std::move(line->pieces.front());
          line->pieces.pop_front();
          if (std::chrono::steady_clock::now() < piece.first) {
            asio::steady_timer due(client->get_executor(), piece.first);
            (void)co_await due.async_wait(kAwait);
          }
          auto [ec, n] = co_await asio::async_write(*client, asio::buffer(piece.second), kAwait);
          if (ec) break;
        }
        close(*upstream);
        close(*client);
      },
      asio::detached);
  char buf[16384];
  for (;;) {
    auto [ec, n] = co_await upstream->async_read_some(asio::buffer(buf), kAwait);
    if (ec) break;
    line->pieces.emplace_back(std::chrono::steady_clock::now() + delay, std::string(buf, n));
    line->signal.cancel();
  }
  line->ended = true;
  line->signal.cancel();
  cut.cancel();
}

}  // namespace

struct FaultProxy::Impl {
  struct Slot {
    FaultRule rule;
    int matched = 0;
    std::uint64_t hits = 0;
  };

  asio::io_context io;
  ssl::context server_tls{ssl::context::tls_server};
  ssl::context upstream_tls{ssl::context::tls_client};
  tcp::acceptor acceptor{io};
  std::string upstream_host, upstream_port;
  std::string folder, kubeconfig;
  std::thread thread;
  mutable std::mutex mutex;
  std::vector<Slot> rules;
  std::atomic<std::uint64_t> requests{0};
  std::function<void(const std::string&, const std::string&)> on_request;
  unsigned short port = 0;

  std::optional<FaultRule> match(std::string_view verb, std::string_view target) {
    ++requests;
    if (on_request) on_request(std::string(verb), std::string(target));
    const bool watch = is_watch(target);
    const auto path = target.substr(0, target.find('?'));
    std::lock_guard lock(mutex);
    for (auto& slot : rules) {
      const auto& r = slot.rule;
      if (!r.verb.empty() && r.verb != verb) continue;
      if (!r.path_contains.empty() && path.find(r.path_contains) == std::string_view::npos) {
        continue;
      }
      if ((r.watch == FaultRule::Watch::only && !watch) ||
          (r.watch == FaultRule::Watch::never && watch)) {
        continue;
      }
      ++slot.matched;
      if (slot.matched >= r.nth && (r.times == 0 || slot.matched < r.nth + r.times)) {
        ++slot.hits;
        return r;
      }
    }
    return std::nullopt;
  }

  awaitable<void> serve(std::shared_ptr<Stream> client) {
    auto [hec] = co_await client->async_handshake(ssl::stream_base::server, kAwait);
    if (hec) co_return;
    auto ex = client->get_executor();
    tcp::resolver resolver(ex);
    auto [rec, endpoints] = co_await resolver.async_resolve(upstream_host, upstream_port, kAwait);
    if (rec) co_return;
    auto upstream = std::make_shared<Stream>(ex, upstream_tls);
    auto [cec, ep] = co_await asio::async_connect(upstream->lowest_layer(), endpoints, kAwait);
    if (cec) co_return;
    SSL_set_tlsext_host_name(upstream->native_handle(), upstream_host.c_str());
    auto [uhec] = co_await upstream->async_handshake(ssl::stream_base::client, kAwait);
    if (uhec) co_return;
    boost::beast::flat_buffer from_client, from_upstream;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(boost::none);
      auto [qec, qn] = co_await http::async_read(*client, from_client, parser, kAwait);
      if (qec) break;
      auto req = parser.release();
      const bool watch = is_watch(req.target());
      const auto rule = match(std::string_view(req.method_string()), req.target());
      if (rule && rule->action == FaultRule::Action::status) {
        http::response<http::string_body> res{static_cast<http::status>(rule->status),
                                              req.version()};
        res.set(http::field::content_type, "application/json");
        if (rule->status == 429) res.set(http::field::retry_after, "1");
        res.body() = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                     R"("message":"injected by asop::testing::FaultProxy","reason":")" +
                     reason_of(rule->status) + R"(","code":)" + std::to_string(rule->status) + "}";
        res.keep_alive(req.keep_alive() && !watch);
        res.prepare_payload();
        auto [wec, wn] = co_await http::async_write(*client, res, kAwait);
        if (wec || !res.keep_alive()) break;
        continue;
      }
      // A watch, or a request a rule delays, stalls or cuts, has the connection to itself: its
      // end is the connection's.
      const bool raw = watch || rule.has_value();
      if (raw) req.keep_alive(false);
      auto [wec, wn] = co_await http::async_write(*upstream, req, kAwait);
      if (wec) break;
      if (raw) {
        co_await relay(client, upstream, rule);
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
    close(*client);
    close(*upstream);
  }

  awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(kAwait);
      if (ec) co_return;
      auto client = std::make_shared<Stream>(std::move(socket), server_tls);
      asio::co_spawn(io, serve(client), asio::detached);
    }
  }
};

FaultProxy::FaultProxy(const ControlPlane& control_plane, Options options)
    : impl_(std::make_unique<Impl>()) {
  impl_->on_request = std::move(options.on_request);
  const std::string pki = control_plane.dir() + "/pki";
  impl_->server_tls.use_certificate_chain_file(pki + "/apiserver.crt");
  impl_->server_tls.use_private_key_file(pki + "/apiserver.key", ssl::context::pem);
  impl_->upstream_tls.load_verify_file(pki + "/ca.crt");
  impl_->upstream_tls.set_verify_mode(ssl::verify_peer);
  const std::string server = control_plane.server();  // https://HOST:PORT
  const auto authority = server.substr(server.find("//") + 2);
  impl_->upstream_host = authority.substr(0, authority.rfind(':'));
  impl_->upstream_port = authority.substr(authority.rfind(':') + 1);

  const tcp::endpoint listen(asio::ip::make_address("127.0.0.1"), options.port);
  impl_->acceptor.open(listen.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(listen);
  impl_->acceptor.listen();
  const auto port = impl_->port = impl_->acceptor.local_endpoint().port();

  char folder[] = "/tmp/asop-fault-proxy-XXXXXX";
  if (::mkdtemp(folder) == nullptr) throw std::runtime_error("asop::testing: mkdtemp failed");
  impl_->folder = folder;
  impl_->kubeconfig = impl_->folder + "/kubeconfig";
  std::ofstream(impl_->kubeconfig)
      << "apiVersion: v1\nkind: Config\nclusters:\n- name: fault-proxy\n  cluster:\n"
      << "    server: https://127.0.0.1:" << port << "\n"
      << "    certificate-authority: " << pki << "/ca.crt\n"
      << "users:\n- name: admin\n  user:\n    token: " << read_file(control_plane.dir() + "/token")
      << "\ncontexts:\n- name: fault-proxy\n  context:\n    cluster: fault-proxy\n    user: admin\n"
      << "current-context: fault-proxy\n";
  asio::co_spawn(impl_->io, impl_->accept_loop(), asio::detached);
  impl_->thread = std::thread([io = &impl_->io] { io->run(); });
}

FaultProxy::~FaultProxy() {
  asio::post(impl_->io, [io = &impl_->io] { io->stop(); });
  impl_->thread.join();
  std::error_code ignored;
  std::filesystem::remove_all(impl_->folder, ignored);
}

const std::string& FaultProxy::kubeconfig() const {
  return impl_->kubeconfig;
}

int FaultProxy::add(FaultRule rule) {
  std::lock_guard lock(impl_->mutex);
  impl_->rules.push_back({std::move(rule)});
  return static_cast<int>(impl_->rules.size()) - 1;
}

std::uint64_t FaultProxy::hits(int id) const {
  std::lock_guard lock(impl_->mutex);
  return impl_->rules.at(static_cast<std::size_t>(id)).hits;
}

unsigned short FaultProxy::port() const {
  return impl_->port;
}

std::uint64_t FaultProxy::requests() const {
  return impl_->requests;
}

}  // namespace asop::testing
