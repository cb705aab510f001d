// SPDX-License-Identifier: Apache-2.0
// An exec credential plugin behind HttpTransport: it never stalls the io_context, a 401 refreshes
// the credential only once for all the requests that used it, and a failing plugin is not re-run
// by every request.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kube/config/exec_credential.h"
#include "kube/config/token_source.h"
#include "kube/http/http_transport.h"
#include "support/async_test.h"
#include "support/fake_api_server.h"
#include "support/source_dir.h"
#include "support/temp_dir.h"

namespace asio = boost::asio;
namespace fs = std::filesystem;
using asio::awaitable;
using kube::Errc;
using kube::HttpRequest;
using kube::HttpTransport;
using kube::testing::FakeApiServer;
using kube::testing::run_async;
using kube::testing::TempDir;
using namespace std::chrono_literals;

namespace {

// The run count the fixture plugin keeps in `dir`.
std::string runs(const TempDir& dir) {
  std::ifstream in(dir.path + "/count");
  std::string n;
  std::getline(in, n);
  return n;
}

// Plain HTTP to `server`, authenticated by the fixture plugin with `env`.
kube::RestConfig exec_config(const FakeApiServer& server,
                             std::vector<std::pair<std::string, std::string>> env) {
  kube::RestConfig c;
  c.scheme = "http";
  c.host = "127.0.0.1";
  c.port = std::to_string(server.port());
  c.source = "test";
  kube::ExecConfig exec;
  exec.api_version = "client.authentication.k8s.io/v1";
  exec.command = kube::testing::source_dir() + "/test/unit/kube/fixtures/exec/plugin.sh";
  exec.env = std::move(env);
  c.exec = exec;
  return c;
}

HttpRequest get(std::string target) {
  HttpRequest r;
  r.target = std::move(target);
  return r;
}

awaitable<void> pause(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
}

}  // namespace

TEST_CASE("a slow exec plugin does not stall the io_context", "[exec][http]") {
  asio::io_context io;
  TempDir dir;
  FakeApiServer server(io, [](const FakeApiServer::Request& r) {
    return FakeApiServer::Reply::json(r.authorization == "Bearer exec-token-1" ? 200 : 401, "{}");
  });
  auto transport = std::make_shared<HttpTransport>(
      io.get_executor(),
      exec_config(server, {{"PLUGIN_COUNTER", dir.path + "/count"}, {"PLUGIN_SLEEP", "1"}}),
      HttpTransport::Options{}, nullptr, nullptr);
  int ticks = 0;
  auto max_gap = std::chrono::steady_clock::duration::zero();
  bool stop = false;
  run_async(
      io,
      [&]() -> awaitable<void> {
        // A 10 ms timer stands for lease renewals, watches and probes.
        asio::co_spawn(
            io,
            [&]() -> awaitable<void> {
              auto last = std::chrono::steady_clock::now();
              while (!stop) {
                co_await pause(10ms);
                const auto now = std::chrono::steady_clock::now();
                max_gap = std::max(max_gap, now - last);
                last = now;
                ++ticks;
              }
            },
            asio::detached);
        auto res = co_await transport->send(get("/api"));
        stop = true;
        REQUIRE(res.ok());
        CHECK(res->status == 200);
      }(),
      [&] { server.stop(); });
  CHECK(runs(dir) == "1");
  // A blocking run would give no tick and a gap of the plugin's whole 1 s sleep; the bounds leave
  // room for a loaded machine (about 100 ticks and gaps of 10 ms when it is quiet).
  CHECK(ticks >= 10);
  CHECK(max_gap < 1s);
}

TEST_CASE("concurrent requests answered 401 refresh the exec credential once", "[exec][http]") {
  asio::io_context io;
  TempDir dir;
  // The server has rotated: only the plugin's second credential is accepted.
  FakeApiServer server(io, [](const FakeApiServer::Request& r) {
    return FakeApiServer::Reply::json(r.authorization == "Bearer exec-token-2" ? 200 : 401, "{}");
  });
  auto transport = std::make_shared<HttpTransport>(
      io.get_executor(), exec_config(server, {{"PLUGIN_COUNTER", dir.path + "/count"}}),
      HttpTransport::Options{}, nullptr, nullptr);
  int ok = 0;
  int done = 0;
  run_async(
      io,
      [&]() -> awaitable<void> {
        for (int i = 0; i < 3; ++i) {
          asio::co_spawn(
              io,
              [&]() -> awaitable<void> {
                auto res = co_await transport->send(get("/api"));
                if (res.ok() && res->status == 200) ++ok;
                ++done;
              },
              asio::detached);
        }
        while (done < 3) co_await pause(5ms);
      }(),
      [&] { server.stop(); });
  // All three sent exec-token-1 and got 401; the first to see it refreshed, the other two found
  // their credential already replaced (or being replaced) and retried with the new one.
  CHECK(ok == 3);
  CHECK(runs(dir) == "2");
  int with_first = 0;
  for (const auto& r : server.seen()) with_first += r.authorization == "Bearer exec-token-1";
  CHECK(with_first == 3);
  CHECK(server.requests() == 6);
}

TEST_CASE("a failing exec plugin is re-run only after a backoff", "[exec][http]") {
  asio::io_context io;
  TempDir dir;
  FakeApiServer server(
      io, [](const FakeApiServer::Request&) { return FakeApiServer::Reply::json(200, "{}"); });
  const std::string fail = dir.path + "/fail";
  std::ofstream(fail).put('x');
  const auto config =
      exec_config(server, {{"PLUGIN_COUNTER", dir.path + "/count"}, {"PLUGIN_FAIL_IF", fail}});
  auto now = std::chrono::system_clock::now();
  auto tokens = std::make_shared<kube::TokenSource>(
      config, &std::chrono::steady_clock::now,
      std::make_unique<kube::ExecCredentialProvider>(config, [&] { return now; }));
  auto transport = std::make_shared<HttpTransport>(io.get_executor(), config,
                                                   HttpTransport::Options{}, tokens, nullptr);
  run_async(
      io,
      [&]() -> awaitable<void> {
        for (int i = 0; i < 3; ++i) {
          auto res = co_await transport->send(get("/api"));
          REQUIRE_FALSE(res.ok());
          CHECK(res.error().is(Errc::unauthorized));
          CHECK_THAT(res.error().message, Catch::Contains("error: run 1 failed"));
        }
        CHECK(runs(dir) == "1");
        // After the first backoff (1 s) the plugin runs again; now it works.
        fs::remove(fail);
        now += 1s;
        auto res = co_await transport->send(get("/api"));
        REQUIRE(res.ok());
        CHECK(res->status == 200);
      }(),
      [&] { server.stop(); });
  CHECK(runs(dir) == "2");
  CHECK(server.requests() == 1);
}
