// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/verb.hpp>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kube {
class RestClient;
}

namespace kube::testing {

// A tiny HTTP/1.1 server on 127.0.0.1 (random port) for transport tests, running coroutines on the
// test's io_context. A handler decides per request: answer, close the connection without an
// answer, never answer, or stream a chunked body (optionally stalling after it).
class FakeApiServer {
 public:
  struct Request {
    boost::beast::http::verb method;
    std::string target;
    std::string body;
    std::string authorization;
    std::string content_type;
    std::string user_agent;
    std::string accept;
    int connection = 0;                                        // 1-based, in accept order
    int request_on_connection = 0;                             // 1-based
    std::vector<std::pair<std::string, std::string>> headers;  // every header, in order
  };
  struct Reply {
    enum class Kind { respond, close, hang, stream };
    Kind kind = Kind::respond;
    int status = 200;
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
    bool keep_alive = true;
    std::vector<std::string> chunks;  // stream: each is one HTTP chunk
    bool stall = false;               // stream: send nothing more after the chunks

    static Reply of(Kind kind) {
      Reply r;
      r.kind = kind;
      return r;
    }
    static Reply stream_of(std::vector<std::string> chunks, bool stall = false) {
      Reply r = of(Kind::stream);
      r.chunks = std::move(chunks);
      r.stall = stall;
      return r;
    }
    static Reply json(int status, std::string body) {
      Reply r;
      r.status = status;
      r.body = std::move(body);
      return r;
    }
  };
  using Handler = std::function<Reply(const Request&)>;

  FakeApiServer(boost::asio::io_context& io, Handler handler);
  ~FakeApiServer();

  unsigned short port() const { return port_; }
  std::string url() const;
  int connections() const { return connections_; }
  int requests() const { return static_cast<int>(seen_.size()); }
  const std::vector<Request>& seen() const { return seen_; }
  // Stops accepting and closes every connection, so io_context::run() can return.
  void stop();

 private:
  boost::asio::awaitable<void> accept_loop();
  boost::asio::awaitable<void> serve(std::shared_ptr<boost::beast::tcp_stream> stream, int index);

  boost::asio::io_context& io_;
  Handler handler_;
  boost::asio::ip::tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  int connections_ = 0;
  std::vector<Request> seen_;
  std::list<std::weak_ptr<boost::beast::tcp_stream>> open_;
  bool stopped_ = false;
};

// A real RestClient speaking plain HTTP to `server` over loopback.
std::shared_ptr<RestClient> rest_client_for(boost::asio::io_context& io,
                                            const FakeApiServer& server);

}  // namespace kube::testing
