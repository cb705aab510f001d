// SPDX-License-Identifier: Apache-2.0
// blackhole_proxy: a TCP proxy for fault tests that can stop forwarding without closing anything.
//
//   blackhole_proxy --listen PORT --control PORT --target HOST:PORT
//
// Forwards every connection made to 127.0.0.1:LISTEN to TARGET, byte for byte (TLS passes
// through). A line-based control port on 127.0.0.1:CONTROL switches the mode; each command is
// answered with one line "ok mode=MODE connections=N" once it is in effect:
//   stall  nothing is forwarded any more, in either direction, and nothing is closed: connections
//          stay established (the kernel still answers TCP keepalive) and new ones are accepted
//          and held. A network blackhole as a client sees it: only deadlines can notice it.
//   flow   forward again (held connections are connected to TARGET now).
//   cut    close every connection and close each new one at once (a reset network).
//   status just the answer line.
// SIGTERM or SIGINT ends it.
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cstdlib>
#include <iostream>
#include <istream>
#include <list>
#include <memory>
#include <string>

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

enum class Mode { flow, stall, cut };

const char* to_string(Mode mode) {
  switch (mode) {
    case Mode::flow:
      return "flow";
    case Mode::stall:
      return "stall";
    case Mode::cut:
      return "cut";
  }
  return "unknown";
}

class BlackholeProxy {
 public:
  BlackholeProxy(asio::io_context& io, unsigned short listen, unsigned short control,
                 tcp::endpoint target)
      : io_(io),
        acceptor_(io, {asio::ip::make_address("127.0.0.1"), listen}),
        control_(io, {asio::ip::make_address("127.0.0.1"), control}),
        target_(std::move(target)),
        changed_(io, asio::steady_timer::time_point::max()) {}

  void start() {
    asio::co_spawn(io_, accept_loop(), asio::detached);
    asio::co_spawn(io_, control_loop(), asio::detached);
  }

 private:
  struct Connection {
    explicit Connection(asio::io_context& io) : client(io), upstream(io) {}
    void close() {
      boost::system::error_code ignored;
      client.close(ignored);
      upstream.close(ignored);
    }
    tcp::socket client;
    tcp::socket upstream;
  };

  // Waits while stalled; false once the connection must go (cut).
  awaitable<bool> pass() {
    while (mode_ == Mode::stall) co_await changed_.async_wait(kAwait);
    co_return mode_ == Mode::flow;
  }

  void set_mode(Mode mode) {
    mode_ = mode;
    changed_.cancel();  // wakes every waiter in pass(); the expiry stays at max
    if (mode == Mode::cut) {
      for (auto& weak : open_) {
        if (auto c = weak.lock()) c->close();
      }
    }
  }

  std::size_t open_connections() {
    open_.remove_if([](const std::weak_ptr<Connection>& w) { return w.expired(); });
    return open_.size();
  }

  awaitable<void> accept_loop() {
    for (;;) {
      auto conn = std::make_shared<Connection>(io_);
      auto [ec] = co_await acceptor_.async_accept(conn->client, kAwait);
      if (ec) {
        if (ec == asio::error::operation_aborted) co_return;
        continue;
      }
      if (mode_ == Mode::cut) {
        conn->close();
        continue;
      }
      open_.push_back(conn);
      asio::co_spawn(io_, serve(conn), asio::detached);
    }
  }

  awaitable<void> serve(std::shared_ptr<Connection> conn) {
    if (!co_await pass()) {
      conn->close();
      co_return;
    }
    auto [ec] = co_await conn->upstream.async_connect(target_, kAwait);
    if (ec) {
      conn->close();
      co_return;
    }
    asio::co_spawn(io_, pump(conn, conn->client, conn->upstream), asio::detached);
    asio::co_spawn(io_, pump(conn, conn->upstream, conn->client), asio::detached);
  }

  // Copies from -> to; the gate is checked after each read, so once a stall is acknowledged not
  // one more byte reaches the other side.
  awaitable<void> pump(std::shared_ptr<Connection> conn, tcp::socket& from, tcp::socket& to) {
    std::array<char, 16384> buf;
    for (;;) {
      auto [rec, n] = co_await from.async_read_some(asio::buffer(buf), kAwait);
      if (!co_await pass()) break;
      if (rec) {
        // Half-close: pass the end of stream on, the other direction may still be flowing.
        boost::system::error_code ignored;
        to.shutdown(tcp::socket::shutdown_send, ignored);
        if (rec == asio::error::eof) co_return;
        break;
      }
      auto [wec, written] = co_await asio::async_write(to, asio::buffer(buf, n), kAwait);
      if (wec) break;
    }
    conn->close();
  }

  awaitable<void> control_loop() {
    for (;;) {
      tcp::socket s(io_);
      auto [ec] = co_await control_.async_accept(s, kAwait);
      if (ec) co_return;
      asio::co_spawn(io_, control_session(std::move(s)), asio::detached);
    }
  }

  awaitable<void> control_session(tcp::socket s) {
    asio::streambuf in;
    for (;;) {
      auto [ec, n] = co_await asio::async_read_until(s, in, '\n', kAwait);
      if (ec) co_return;
      std::istream lines(&in);
      std::string command;
      std::getline(lines, command);
      if (!command.empty() && command.back() == '\r') command.pop_back();
      std::string reply;
      if (command == "stall") {
        set_mode(Mode::stall);
      } else if (command == "flow") {
        set_mode(Mode::flow);
      } else if (command == "cut") {
        set_mode(Mode::cut);
      } else if (command != "status") {
        reply = "error unknown command \"" + command + "\" (stall, flow, cut, status)\n";
      }
      if (reply.empty()) {
        reply = std::string("ok mode=") + to_string(mode_) +
                " connections=" + std::to_string(open_connections()) + "\n";
      }
      std::cerr << "blackhole_proxy: " << command << " -> " << reply << std::flush;
      auto [wec, written] = co_await asio::async_write(s, asio::buffer(reply), kAwait);
      if (wec) co_return;
    }
  }

  asio::io_context& io_;
  tcp::acceptor acceptor_;
  tcp::acceptor control_;
  tcp::endpoint target_;
  Mode mode_ = Mode::flow;
  asio::steady_timer changed_;
  std::list<std::weak_ptr<Connection>> open_;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "blackhole_proxy: " << why
            << "\nusage: blackhole_proxy --listen PORT --control PORT --target HOST:PORT\n";
  std::exit(2);
}

unsigned short port_of(const std::string& text) {
  char* end = nullptr;
  const long port = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || port < 1 || port > 65535) usage("bad port \"" + text + "\"");
  return static_cast<unsigned short>(port);
}

}  // namespace

int main(int argc, char** argv) {
  std::string listen;
  std::string control;
  std::string target;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage("missing value for " + flag);
    const std::string value = argv[++i];
    if (flag == "--listen") {
      listen = value;
    } else if (flag == "--control") {
      control = value;
    } else if (flag == "--target") {
      target = value;
    } else {
      usage("unknown flag " + flag);
    }
  }
  if (listen.empty() || control.empty() || target.empty()) usage("all three flags are required");
  const auto colon = target.rfind(':');
  if (colon == std::string::npos) usage("--target must be HOST:PORT");
  try {
    asio::io_context io;
    tcp::resolver resolver(io);
    auto resolved = resolver.resolve(target.substr(0, colon), target.substr(colon + 1));
    BlackholeProxy proxy(io, port_of(listen), port_of(control), resolved.begin()->endpoint());
    proxy.start();
    asio::signal_set signals(io, SIGTERM, SIGINT);
    signals.async_wait([&](const boost::system::error_code&, int) { io.stop(); });
    std::cout << "blackhole_proxy: 127.0.0.1:" << listen << " -> " << target << ", control on "
              << control << std::endl;
    io.run();
  } catch (const std::exception& e) {
    std::cerr << "blackhole_proxy: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
