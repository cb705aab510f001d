// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/asop/testing/: the test kit's API (docs/testing.md), installed with the public headers:
// a real control plane shared by a test run, a namespace per test case, the controller under test
// on a clock a test moves, a blocking client, waiting with a deadline. May use: src/asop/ (the
// Rooms table in docs/architecture.md).

#include <memory>
#include <string>
#include <string_view>

#ifndef ASOP_TESTING_SCRIPTS_DIR
// The installed package defines it (share/asop/controlplane/ under the prefix); in its own tree
// the runtime's tests attach to the control plane test/run-all.sh starts.
#define ASOP_TESTING_SCRIPTS_DIR ""
#endif

namespace asop::testing {

// What a command printed on stdout and how it ended (stderr goes to the test's log).
struct CommandResult {
  int status = -1;  // the exit code; -1 when it died of a signal
  std::string out;
  bool ok() const { return status == 0; }
};

// A real control plane: etcd, kube-apiserver, kube-controller-manager (the garbage collector, the
// namespace and Deployment controllers), kube-scheduler and a kwok node that runs Pods, built from
// their Go modules by the scripts installed with the package and cached under
// ~/.cache/appservice-operator/controlplane (test/controlplane/ in this repository).
class ControlPlane {
 public:
  // One control plane per test run, whoever asks first:
  //  - $ASOP_CONTROLPLANE_DIR names one that is up (a ctest fixture, test/run-all.sh): attach;
  //  - otherwise the one under $XDG_RUNTIME_DIR (or /tmp)/asop-testing-UID/shared, started by
  //    the first test process under a file lock, so test binaries run at once never start two;
  //    every process holds it while it runs, and the last one to exit stops it.
  // No binaries and no Go to build them: the process prints why and exits 77 (ctest's
  // SKIP_RETURN_CODE: the test is reported skipped, never passed); with
  // ASOP_TESTING_REQUIRE_CONTROLPLANE=1 (CI) that is an exception: the test fails.
  // $ASOP_CONTROLPLANE_SCRIPTS overrides where the scripts are.
  static ControlPlane& shared(std::string_view scripts_dir = ASOP_TESTING_SCRIPTS_DIR);
  // The control plane the scripts run in `dir` (test/controlplane/up.sh DIR), already up; it is
  // neither started nor stopped here.
  static std::unique_ptr<ControlPlane> attach(const std::string& dir);
  // A control plane of the caller's own, for a test that disrupts it; stopped and removed with
  // the object. 10 to 20 s to start with the binaries cached.
  static std::unique_ptr<ControlPlane> start_private(
      std::string_view scripts_dir = ASOP_TESTING_SCRIPTS_DIR);

  // A private control plane's components, by the scripts' names: etcd, kube-apiserver,
  // kube-controller-manager, kube-scheduler, kwok. stop() returns once the process is gone (at
  // once when it was not running); restart() stops it if it runs, starts it again on the same
  // port and data, and returns once all is ready.
  void stop(const std::string& component) const;
  void restart(const std::string& component) const;
  // Moves etcd's revision past every resourceVersion handed out so far (a key outside the API
  // server's data) and compacts its history there (kube-apiserver compacts every 5 minutes): no
  // watch can resume from a resourceVersion a client holds now, and no list continue at it.
  void compact_etcd() const;

  ~ControlPlane();
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  // The folder the scripts wrote: kubeconfig, pki/, logs/.
  const std::string& dir() const;
  // An admin kubeconfig (client certificate, system:masters).
  std::string kubeconfig() const;
  // https://127.0.0.1:PORT
  std::string server() const;
  // kubectl (the server's own version) with this kubeconfig; `input` on its stdin when given.
  CommandResult kubectl(const std::string& args, std::string_view input = {}) const;
  // Applies the CRDs of a file or folder once per control plane and waits until they are
  // Established; throws with kubectl's words when they are refused.
  void apply_crds(const std::string& path) const;

  struct Impl;

 private:
  explicit ControlPlane(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace asop::testing
