// SPDX-License-Identifier: Apache-2.0
// Hostile framing from the server: chunk extensions, trailers and bodies beyond the client's caps
// are errors, never allocations as large as the server cares to send.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <regex>
#include <string>

#include "kube/http/http_connection.h"
#include "kube/http/http_transport.h"
#include "kube/watch/watch_decoder.h"
#include "support/async_test.h"
#include "support/http_test_support.h"
#include "support/local_listener.h"
#include "support/source_dir.h"

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;
using kube::Errc;
using kube::HttpTransport;
using kube::testing::get;
using kube::testing::run_async;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kMiB = std::size_t{1} << 20;

// A plain TCP server that answers every connection's first request with `reply`, byte for byte
// in 64 KiB pieces, then waits for the client to close.
class RawServer {
 public:
  RawServer(asio::io_context& io, std::string reply)
      : listener_(io, [reply = std::make_shared<std::string>(std::move(reply))](auto s) {
          return serve(s, reply);
        }) {}
  unsigned short port() const { return listener_.port(); }
  void stop() { listener_.stop(); }

 private:
  static awaitable<void> serve(std::shared_ptr<tcp::socket> s, std::shared_ptr<std::string> reply) {
    asio::streambuf request;
    auto [rec, n] = co_await asio::async_read_until(*s, request, "\r\n\r\n", kAwait);
    if (rec) co_return;
    for (std::size_t at = 0; at < reply->size(); at += 64 * 1024) {
      const std::size_t len = std::min<std::size_t>(64 * 1024, reply->size() - at);
      auto [wec, w] = co_await asio::async_write(*s, asio::buffer(reply->data() + at, len), kAwait);
      if (wec) co_return;
    }
    char sink[512];
    for (;;) {
      auto [ec, r] = co_await s->async_read_some(asio::buffer(sink), kAwait);
      if (ec) co_return;
    }
  }

  kube::testing::LocalListener listener_;
};

kube::RestConfig config_for(const RawServer& server) {
  return kube::testing::plain_config(server.port());
}

const std::string kChunkedHeader =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    "Transfer-Encoding: chunked\r\n\r\n";

// The error `use` gets from a transport to a server that sends `reply`.
kube::ApiError error_from(std::string reply, HttpTransport::Options options,
                          std::function<awaitable<kube::ApiError>(HttpTransport&)> use) {
  asio::io_context io;
  RawServer server(io, std::move(reply));
  HttpTransport transport(io.get_executor(), config_for(server), options, nullptr, nullptr);
  kube::ApiError error;
  run_async(
      io, [&]() -> awaitable<void> { error = co_await use(transport); }(), [&] { server.stop(); });
  return error;
}

// The error of one GET.
kube::ApiError send_error(std::string reply, HttpTransport::Options options = {}) {
  return error_from(std::move(reply), options, [](HttpTransport& t) -> awaitable<kube::ApiError> {
    auto res = co_await t.send(get("/api/v1/configmaps"));
    REQUIRE_FALSE(res.ok());
    co_return res.error();
  });
}

// The error of reading a watch body that never ends cleanly.
kube::ApiError stream_error(std::string reply) {
  return error_from(std::move(reply), {}, [](HttpTransport& t) -> awaitable<kube::ApiError> {
    auto stream = co_await t.open_stream(get("/api/v1/pods?watch=1"));
    REQUIRE(stream.ok());
    for (;;) {
      auto piece = co_await (*stream)->read_some(std::chrono::seconds(10));
      if (!piece) co_return piece.error();
      REQUIRE_FALSE(piece->empty());
    }
  });
}

}  // namespace

TEST_CASE("a 4 MiB chunk extension is an error, not a 4 MiB buffer", "[http][framing]") {
  const std::string reply =
      kChunkedHeader + "5;ext=" + std::string(4 * kMiB, 'x') + "\r\nhello\r\n0\r\n\r\n";
  const auto error = send_error(reply);
  INFO(error.describe());
  CHECK(error.is(Errc::unavailable));
  CHECK(error.message.find("longer than the 256 KiB read buffer") != std::string::npos);
}

TEST_CASE("a 4 MiB trailer is an error", "[http][framing]") {
  const std::string reply =
      kChunkedHeader + "2\r\n{}\r\n0\r\nX-Trailer: " + std::string(4 * kMiB, 'x') + "\r\n\r\n";
  const auto error = send_error(reply);
  INFO(error.describe());
  CHECK(error.message.find("longer than the 256 KiB read buffer") != std::string::npos);
}

TEST_CASE("a chunk extension mid-watch is an error, not an allocation", "[http][framing][watch]") {
  const std::string reply = kChunkedHeader + "3\r\n{}\n\r\n4;" + std::string(4 * kMiB, 'x');
  const auto error = stream_error(reply);
  INFO(error.describe());
  CHECK(error.message.find("longer than the 256 KiB read buffer") != std::string::npos);
}

TEST_CASE("a header over the header limit is an error", "[http][framing]") {
  const std::string reply =
      "HTTP/1.1 200 OK\r\nX-Big: " + std::string(kMiB, 'x') + "\r\nContent-Length: 0\r\n\r\n";
  const auto error = send_error(reply);
  INFO(error.describe());
  CHECK(error.is(Errc::unavailable));
}

TEST_CASE("a response over max_response_bytes is response_too_large, chunked or not",
          "[http][framing]") {
  HttpTransport::Options small;
  small.max_response_bytes = 1024;
  const std::string body(4096, 'x');
  for (const std::string& reply :
       {"HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n" + body,
        kChunkedHeader + "1000\r\n" + body + "\r\n0\r\n\r\n",
        // Announced too large: refused before the body arrives.
        std::string("HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n")}) {
    const auto error = send_error(reply, small);
    INFO(error.describe());
    CHECK(error.is(Errc::response_too_large));
    CHECK(error.message.find("response larger than the 1 KiB limit") != std::string::npos);
  }
}

TEST_CASE("the default caps fit the Deployment's memory limit", "[http][framing]") {
  // A list page is held as text and then parsed into a DOM of about the same size again; a watch
  // line likewise. Both at their caps at once must leave most of the container's limit free.
  std::ifstream in(kube::testing::source_dir() + "/deploy/base/operator.yaml");
  const std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch m;
  REQUIRE(std::regex_search(yaml, m, std::regex(R"(limits:.*memory: (\d+)Mi)")));
  const std::size_t limit = std::stoul(m[1]) * kMiB;
  const std::size_t page = HttpTransport::Options{}.max_response_bytes;
  const std::size_t line = kube::WatchDecoder::kDefaultMaxLineBytes;
  CHECK(page == 16 * kMiB);
  CHECK(line == 16 * kMiB);
  CHECK(2 * page + 2 * line <= limit / 2);
  // One read buffer per connection: a watch each, plus the pool's idle ones.
  CHECK(16 * kube::HttpConnection::kMaxReadBufferBytes <= 4 * kMiB);
}
