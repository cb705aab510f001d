// SPDX-License-Identifier: Apache-2.0
#include <openssl/x509.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "ctrl/base/clock.h"
#include "ctrl/metrics/metrics_registry.h"
#include "ctrl/serve/probe_metrics_server.h"
#include "ctrl/serve/request_authorizer.h"
#include "ctrl/serve/serving_cert.h"
#include "support/async_test.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using asio::awaitable;
using asio::ip::tcp;
using kube::testing::run_async;
using namespace std::chrono_literals;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
using Response = http::response<http::string_body>;

// "alice" may get /metrics; "bob" is a user without the right; others are no one.
class FakeReviewer : public ctrl::AccessReviewer {
 public:
  awaitable<ctrl::TokenReviewResult> review_token(std::string token) override {
    ctrl::TokenReviewResult r;
    r.authenticated = token == "alice" || token == "bob";
    r.user.username = token;
    co_return r;
  }
  awaitable<ctrl::AccessReviewResult> review_access(ctrl::UserInfo user, std::string,
                                                    std::string) override {
    ctrl::AccessReviewResult r;
    r.allowed = user.username == "alice";
    co_return r;
  }
};

// One HTTPS request on a new connection; the server's certificate is not verified (self-signed),
// its subject's common name is returned in `common_name`.
awaitable<Response> https_get(unsigned short port, std::string target, std::string token,
                              std::string* common_name = nullptr) {
  ssl::context ctx(ssl::context::tls_client);
  ctx.set_verify_mode(ssl::verify_none);
  beast::ssl_stream<beast::tcp_stream> stream(co_await asio::this_coro::executor, ctx);
  auto& tcp_layer = beast::get_lowest_layer(stream);
  tcp_layer.expires_after(5s);
  auto [cec] = co_await tcp_layer.async_connect(
      tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), kAwait);
  REQUIRE_FALSE(cec);
  auto [hec] = co_await stream.async_handshake(ssl::stream_base::client, kAwait);
  INFO(hec.message());
  REQUIRE_FALSE(hec);
  if (common_name) {
    X509* cert = SSL_get1_peer_certificate(stream.native_handle());
    REQUIRE(cert != nullptr);
    char cn[256] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
    X509_free(cert);
    *common_name = cn;
  }
  http::request<http::string_body> req{http::verb::get, target, 11};
  req.set(http::field::host, "127.0.0.1");
  if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
  req.keep_alive(false);
  auto [wec, wn] = co_await http::async_write(stream, req, kAwait);
  REQUIRE_FALSE(wec);
  beast::flat_buffer buffer;
  Response res;
  auto [rec, rn] = co_await http::async_read(stream, buffer, res, kAwait);
  INFO(rec.message());
  REQUIRE_FALSE(rec);
  co_return res;
}

void make_cert(const std::filesystem::path& dir, const std::string& cn,
               const std::string& key_name = "tls.key") {
  const std::string cmd =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
      "-days 1 -subj /CN=" +
      cn + " -keyout " + (dir / key_name).string() + " -out " + (dir / "tls.crt").string() +
      " 2>/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
}

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/asop-cert-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

}  // namespace

TEST_CASE("secure metrics: HTTPS, 401 without a token, 403 without the right, 200 with it",
          "[health][metricsauth]") {
  asio::io_context io;
  ctrl::FakeClock clock;
  ctrl::MetricsRegistry metrics;
  metrics.counter("demo_total", "A demo counter.").inc();
  FakeReviewer reviewer;
  ctrl::RequestAuthorizer authorizer(reviewer, clock, {}, nullptr);
  ctrl::ServingCertificate cert({}, clock);
  ctrl::ProbeMetricsServer::Options o;
  o.bind_address = "127.0.0.1:0";
  o.tls_context = [&cert] { return cert.context(); };
  o.metrics_authorizer = &authorizer;
  ctrl::ProbeMetricsServer server(io.get_executor(), o, clock, &metrics);
  server.start();
  const auto port = server.port();
  run_async(
      io,
      [&]() -> awaitable<void> {
        std::string cn;
        auto none = co_await https_get(port, "/metrics", "", &cn);
        CHECK(cn == "appservice-operator");
        CHECK(none.result() == http::status::unauthorized);
        CHECK(none[http::field::www_authenticate] == "Bearer");
        CHECK(none.body().find("demo_total") == std::string::npos);
        auto stranger = co_await https_get(port, "/metrics", "mallory");
        CHECK(stranger.result() == http::status::unauthorized);
        auto bob = co_await https_get(port, "/metrics", "bob");
        CHECK(bob.result() == http::status::forbidden);
        CHECK(bob.body().find("demo_total") == std::string::npos);
        auto alice = co_await https_get(port, "/metrics", "alice");
        CHECK(alice.result() == http::status::ok);
        CHECK(alice.body().find("demo_total 1") != std::string::npos);
        // The probes on this port need no token, as controller-runtime's metrics server has none.
        auto health = co_await https_get(port, "/healthz", "");
        CHECK(health.result() == http::status::ok);
      }(),
      [&] { server.stop(); });
}

TEST_CASE("secure metrics: a plain HTTP request on the TLS port gets no metrics", "[health]") {
  asio::io_context io;
  ctrl::FakeClock clock;
  ctrl::MetricsRegistry metrics;
  metrics.counter("demo_total", "A demo counter.").inc();
  ctrl::ServingCertificate cert({}, clock);
  ctrl::ProbeMetricsServer::Options o;
  o.bind_address = "127.0.0.1:0";
  o.tls_context = [&cert] { return cert.context(); };
  ctrl::ProbeMetricsServer server(io.get_executor(), o, clock, &metrics);
  server.start();
  run_async(
      io,
      [&]() -> awaitable<void> {
        beast::tcp_stream stream(co_await asio::this_coro::executor);
        stream.expires_after(5s);
        auto [cec] = co_await stream.async_connect(
            tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.port()), kAwait);
        REQUIRE_FALSE(cec);
        http::request<http::string_body> req{http::verb::get, "/metrics", 11};
        auto [wec, wn] = co_await http::async_write(stream, req, kAwait);
        REQUIRE_FALSE(wec);
        std::string got;
        char buf[512];
        for (;;) {
          auto [ec, n] = co_await stream.async_read_some(asio::buffer(buf), kAwait);
          got.append(buf, n);
          if (ec) break;
        }
        CHECK(got.find("demo_total") == std::string::npos);
      }(),
      [&] { server.stop(); });
}

TEST_CASE("serving certificate: files are reloaded when they change, a bad pair is not used",
          "[health]") {
  TempDir dir;
  make_cert(dir.path, "first");
  ctrl::FakeClock clock;
  ctrl::ServingCertificate::Options o;
  o.cert_dir = dir.path.string();
  ctrl::ServingCertificate cert(o, clock);
  CHECK(cert.loads() == 1);
  const auto first = cert.context();

  // A rotation (new files, a later mtime): seen at the next check, not before.
  make_cert(dir.path, "second");
  std::filesystem::last_write_time(dir.path / "tls.crt",
                                   std::filesystem::file_time_type::clock::now() + 1s);
  CHECK(cert.context() == first);
  clock.step(11s);
  const auto second = cert.context();
  CHECK(second != first);
  CHECK(cert.loads() == 2);

  // Half a rotation: a new certificate with the old key does not match; the last good one stays.
  make_cert(dir.path, "third", "other.key");
  std::filesystem::last_write_time(dir.path / "tls.crt",
                                   std::filesystem::file_time_type::clock::now() + 2s);
  clock.step(11s);
  CHECK(cert.context() == second);
  CHECK(cert.loads() == 2);

  // Proved over a connection: the server presents the reloaded certificate.
  make_cert(dir.path, "fourth");
  std::filesystem::last_write_time(dir.path / "tls.crt",
                                   std::filesystem::file_time_type::clock::now() + 3s);
  clock.step(11s);
  asio::io_context io;
  ctrl::ProbeMetricsServer::Options so;
  so.bind_address = "127.0.0.1:0";
  so.tls_context = [&cert] { return cert.context(); };
  ctrl::ProbeMetricsServer server(io.get_executor(), so, clock, nullptr);
  server.start();
  run_async(
      io,
      [&]() -> awaitable<void> {
        std::string cn;
        auto res = co_await https_get(server.port(), "/healthz", "", &cn);
        CHECK(res.result() == http::status::ok);
        CHECK(cn == "fourth");
      }(),
      [&] { server.stop(); });
}

TEST_CASE("serving certificate: a missing file is a start-up error naming it", "[health]") {
  TempDir dir;
  ctrl::FakeClock clock;
  ctrl::ServingCertificate::Options o;
  o.cert_dir = dir.path.string();
  try {
    ctrl::ServingCertificate cert(o, clock);
    FAIL("no error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find((dir.path / "tls.crt").string()) != std::string::npos);
  }
}
