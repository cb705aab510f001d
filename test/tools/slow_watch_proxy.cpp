// SPDX-License-Identifier: Apache-2.0
// slow_watch_proxy: asop::testing::FaultProxy (docs/testing.md) as a process, in front of the API
// server of a control plane the scripts run, delaying the bytes of every watch response, for the
// read-your-own-writes and finalizer e2e tests:
//
//   slow_watch_proxy --controlplane DIR [--delay-ms N] [--listen PORT]
//
// Prints "listening on 127.0.0.1:PORT kubeconfig FILE" once it accepts (FILE: the API server's
// CA and the admin token, through the proxy), "watch TARGET" for each watch opened, and ends on
// SIGTERM or SIGINT. Every other request and its response pass at once.
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>

#include "asop/testing/control_plane.h"
#include "asop/testing/fault_proxy.h"

namespace {

[[noreturn]] void usage() {
  std::cerr << "usage: slow_watch_proxy --controlplane DIR [--delay-ms N] [--listen PORT]\n";
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  int delay_ms = 1500;
  unsigned short port = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage();
    const std::string value = argv[++i];
    if (arg == "--controlplane") {
      dir = value;
    } else if (arg == "--delay-ms") {
      delay_ms = std::stoi(value);
    } else if (arg == "--listen") {
      port = static_cast<unsigned short>(std::stoi(value));
    } else {
      usage();
    }
  }
  if (dir.empty()) usage();
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // the proxy's thread inherits the mask

  auto control_plane = asop::testing::ControlPlane::attach(dir);
  std::mutex out;
  asop::testing::FaultProxy::Options options;
  options.port = port;
  options.on_request = [&out](const std::string&, const std::string& target) {
    if (target.find("watch=true") == std::string::npos &&
        target.find("watch=1") == std::string::npos) {
      return;
    }
    std::lock_guard lock(out);
    std::cout << "watch " << target << std::endl;
  };
  asop::testing::FaultProxy proxy(*control_plane, options);
  proxy.add({.watch = asop::testing::FaultRule::Watch::only,
             .action = asop::testing::FaultRule::Action::delay,
             .delay = std::chrono::milliseconds(delay_ms),
             .times = 0});
  {
    std::lock_guard lock(out);
    std::cout << "listening on 127.0.0.1:" << proxy.port() << " kubeconfig " << proxy.kubeconfig()
              << " delay " << delay_ms << " ms" << std::endl;
  }
  int signal = 0;
  sigwait(&stop, &signal);
  return 0;
}
