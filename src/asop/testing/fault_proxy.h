// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "asop/testing/control_plane.h"

namespace asop::testing {

// What a FaultProxy does to the requests a rule matches.
struct FaultRule {
  enum class Watch { any, only, never };
  enum class Action {
    status,  // answer `status` (409, 429, 500, 410, ...) with a Status body; the server never sees
             // it
    delay,   // pass it on; the response's bytes reach the client `delay` after they came
    stall,   // pass it on, then relay nothing more: the client waits until it gives up
    cut,     // pass it on, and close the connection `delay` after the response began (a watch cut)
  };

  std::string verb = {};           // HTTP method: "GET", "PATCH", ...; empty: any
  std::string path_contains = {};  // a substring of the path ("/configmaps"); empty: any
  Watch watch = Watch::any;        // watch requests (?watch=true) only, or never
  Action action = Action::status;
  int status = 0;                      // Action::status
  std::chrono::milliseconds delay{0};  // Action::delay and Action::cut
  int nth = 1;                         // the first matching request it acts on (1: the first one)
  int times = 1;                       // how many in a row from there; 0: every one from then on
};

// A TLS proxy in front of the control plane's API server, on a free loopback port and a thread of
// its own, that breaks the requests its rules match the way a real server or network does. Point
// the controller under test at kubeconfig() (TestApp::Options::kubeconfig); the test's own
// TestClient stays direct. Each request is matched against the rules in the order added; the
// first that matches and still has times left acts on it, the rest pass untouched.
class FaultProxy {
 public:
  struct Options {
    unsigned short port = 0;  // 0: a free one
    // Called on the proxy's thread for every request, before the rules: (method, target).
    std::function<void(const std::string&, const std::string&)> on_request = {};
  };

  explicit FaultProxy(const ControlPlane& control_plane) : FaultProxy(control_plane, Options()) {}
  FaultProxy(const ControlPlane& control_plane, Options options);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  // A kubeconfig through the proxy: the API server's CA and its static admin token (a client
  // certificate cannot pass a proxy that terminates TLS).
  const std::string& kubeconfig() const;
  // Adds a rule; its id for hits().
  int add(FaultRule rule);
  // How many requests rule `id` acted on.
  std::uint64_t hits(int id) const;
  // How many requests came through, matched or not.
  std::uint64_t requests() const;
  unsigned short port() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace asop::testing
