// SPDX-License-Identifier: Apache-2.0
#pragma once

// Helpers shared by the C++ e2e tests: a client for $KUBECONFIG, kubectl as users run it, and
// waiting on the event loop with a deadline.

#include <sys/wait.h>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include "kube/api/rest_client.h"
#include "kube/config/kubeconfig.h"
#include "kube/core/resource_path.h"
#include "kube/http/http_transport.h"
#include "kube/http/request_metrics.h"

namespace e2e {

inline std::string kubeconfig_path() {
  const char* path = std::getenv("KUBECONFIG");
  REQUIRE(path != nullptr);
  return path;
}

// The folder test/controlplane/up.sh wrote (run-all.sh exports it): pids, etcd URL, logs.
inline std::string controlplane_dir() {
  const char* dir = std::getenv("ASOP_CONTROLPLANE_DIR");
  REQUIRE(dir != nullptr);
  return dir;
}

inline std::shared_ptr<kube::RestClient> client_for(
    boost::asio::io_context& io, const std::string& kubeconfig,
    std::chrono::milliseconds request_timeout = std::chrono::seconds(10)) {
  kube::HttpTransport::Options options;
  options.request_timeout = request_timeout;
  return std::make_shared<kube::RestClient>(std::make_shared<kube::HttpTransport>(
      io.get_executor(), kube::Kubeconfig::load_file(kubeconfig).resolve(), options, nullptr,
      std::make_shared<kube::RequestMetrics>()));
}

// Runs a shell command; returns its exit status and stdout (stderr goes to the test log).
struct CommandResult {
  int status = -1;
  std::string out;
};
inline CommandResult sh(const std::string& command) {
  CommandResult r;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) r.out.append(buf, n);
  int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline CommandResult kubectl(const std::string& args, const std::string& kubeconfig) {
  return sh("kubectl --kubeconfig '" + kubeconfig + "' " + args);
}

// A namespace name unique to this run.
inline std::string unique_name(const std::string& prefix) {
  static std::mt19937_64 rng{std::random_device{}()};
  return prefix + "-" + std::to_string(rng() % 1000000000);
}

// Runs `body(ns)` in namespace `ns`, created first and deleted afterwards even when the body fails.
inline boost::asio::awaitable<void> in_namespace(
    kube::RestClient& client, std::string ns,
    std::function<boost::asio::awaitable<void>(std::string)> body) {
  const auto namespaces = kube::ResourcePath::from_api_version("v1", "namespaces");
  auto created = co_await client.create(
      namespaces, R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns + "\"}}");
  REQUIRE(created.ok());
  std::exception_ptr failure;
  try {
    co_await body(ns);
  } catch (...) {
    failure = std::current_exception();
  }
  auto deleted = co_await client.delete_(namespaces.named(ns));
  if (failure) std::rethrow_exception(failure);
  CHECK(deleted.ok());
}

// Runs the loop in short slices until `done()` or the deadline; whether `done()` held.
inline bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
                      std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    io.run_for(std::chrono::milliseconds(20));
    if (io.stopped()) io.restart();
  }
  return true;
}

}  // namespace e2e
