// SPDX-License-Identifier: Apache-2.0
// The controller runtime against the real control plane, through a small test controller on
// ConfigMaps: it records, per key, what the cache holds when the key is reconciled.

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "ctrl/cache/informer.h"
#include "ctrl/controller.h"
#include "ctrl/metrics/metrics_registry.h"
#include "e2e_support.h"

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

class RecordingReconciler : public ctrl::Reconciler {
 public:
  explicit RecordingReconciler(const ctrl::Informer& informer) : informer_(informer) {}

  std::map<std::string, std::string> value;  // key -> data.v as last reconciled
  std::set<std::string> deleted;

  asio::awaitable<ctrl::ReconcileResult> reconcile(ctrl::Request request,
                                                   const ctrl::ReconcileContext&) override {
    auto object = informer_.store().get(request.key());
    if (!object) {
      value.erase(request.key());
      deleted.insert(request.key());
    } else {
      deleted.erase(request.key());
      const auto& data = (*object)["data"];
      value[request.key()] = data.IsObject() && data.HasMember("v") ? data["v"].GetString() : "";
    }
    co_return ctrl::ReconcileResult::done();
  }

 private:
  const ctrl::Informer& informer_;
};

// A test controller on ConfigMaps of one namespace, running on `io` until destroyed.
struct TestController {
  asio::io_context& io;
  ctrl::RealClock clock;
  ctrl::SeededRandom random;
  ctrl::MetricsRegistry metrics;
  std::unique_ptr<ctrl::Informer> informer;
  std::unique_ptr<RecordingReconciler> reconciler;
  std::unique_ptr<ctrl::Controller> controller;
  bool informer_done = false;
  bool controller_done = false;

  TestController(asio::io_context& io_, const std::string& kubeconfig, const std::string& ns)
      : io(io_) {
    ctrl::Informer::Options options;
    options.collection = kube::ResourcePath::from_api_version("v1", "configmaps").in_namespace(ns);
    options.page_size = 5;
    informer = std::make_unique<ctrl::Informer>(io.get_executor(), e2e::client_for(io, kubeconfig),
                                                options, clock, random);
    reconciler = std::make_unique<RecordingReconciler>(*informer);
    ctrl::Controller::Options copts;
    copts.name = "e2e-configmaps";
    controller = std::make_unique<ctrl::Controller>(io.get_executor(), copts, *reconciler, metrics,
                                                    clock, random);
    informer->add_handler(controller->enqueue_self());
    asio::co_spawn(io, informer->run(), [this](std::exception_ptr) { informer_done = true; });
    asio::co_spawn(io, controller->run(), [this](std::exception_ptr) { controller_done = true; });
  }
  ~TestController() {
    informer->stop();
    controller->shut_down();
    e2e::run_until(
        io, [&] { return informer_done && controller_done; }, 30s);
  }
};

void restart_apiserver(const std::string& cp_dir) {
  // SIGKILL: the connections are cut without a goodbye, as in a crash.
  REQUIRE(e2e::sh("kill -KILL $(cat '" + cp_dir + "/run/kube-apiserver.pid')").status == 0);
  REQUIRE(
      e2e::sh("bash '" ASOP_SOURCE_DIR "/test/controlplane/up.sh' '" + cp_dir + "' >&2").status ==
      0);
}

}  // namespace

TEST_CASE("runtime: a test controller follows creates, updates, deletes and an API server restart",
          "[e2e][serial][runtime]") {
  const auto kubeconfig = e2e::kubeconfig_path();
  const auto ns = e2e::unique_name("rt");
  REQUIRE(e2e::kubectl("create namespace " + ns, kubeconfig).status == 0);
  // More objects than one page, so the initial list pages.
  for (int i = 0; i < 12; ++i) {
    REQUIRE(e2e::kubectl("create configmap pre-" + std::to_string(i) + " -n " + ns +
                             " --from-literal=v=" + std::to_string(i),
                         kubeconfig)
                .status == 0);
  }
  asio::io_context io;
  {
    TestController tc(io, kubeconfig, ns);
    auto& seen = tc.reconciler->value;
    REQUIRE(e2e::run_until(
        io, [&] { return tc.informer->has_synced(); }, 30s));
    CHECK(tc.informer->store().size() == 13);  // 12 + kube-root-ca.crt
    REQUIRE(e2e::run_until(
        io, [&] { return seen.size() == 13; }, 30s));
    CHECK(seen[ns + "/pre-7"] == "7");

    REQUIRE(
        e2e::kubectl("create configmap a -n " + ns + " --from-literal=v=1", kubeconfig).status ==
        0);
    REQUIRE(e2e::run_until(
        io, [&] { return seen[ns + "/a"] == "1"; }, 30s));
    REQUIRE(
        e2e::kubectl("patch configmap a -n " + ns + " -p '{\"data\":{\"v\":\"2\"}}'", kubeconfig)
            .status == 0);
    REQUIRE(e2e::run_until(
        io, [&] { return seen[ns + "/a"] == "2"; }, 30s));
    REQUIRE(e2e::kubectl("delete configmap a -n " + ns, kubeconfig).status == 0);
    REQUIRE(e2e::run_until(
        io, [&] { return tc.reconciler->deleted.count(ns + "/a") == 1; }, 30s));

    // The API server dies and comes back; a change made as soon as it is back (while the
    // informer is still reconnecting) must arrive, and so must a delete.
    restart_apiserver(e2e::controlplane_dir());
    REQUIRE(
        e2e::kubectl("create configmap b -n " + ns + " --from-literal=v=after-restart", kubeconfig)
            .status == 0);
    REQUIRE(e2e::kubectl("delete configmap pre-0 -n " + ns, kubeconfig).status == 0);
    REQUIRE(e2e::run_until(
        io, [&] { return seen[ns + "/b"] == "after-restart"; }, 90s));
    REQUIRE(e2e::run_until(
        io, [&] { return tc.reconciler->deleted.count(ns + "/pre-0") == 1; }, 30s));
    CHECK(tc.informer->store().size() == 13);
  }
  e2e::kubectl("delete namespace " + ns + " --wait=false", kubeconfig);
}

TEST_CASE("runtime: after an etcd compaction, with the watch cache off, the informer relists",
          "[e2e][runtime]") {
  // A control plane of its own: kube-apiserver with --watch-cache=false, so a watch from a
  // compacted resourceVersion reaches etcd and fails with 410.
  char tmpl[] = "/tmp/asop-nowatchcache.XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  struct Down {
    std::string dir;
    ~Down() {
      e2e::sh("bash '" ASOP_SOURCE_DIR "/test/controlplane/down.sh' '" + dir + "' --purge");
    }
  } down{dir};
  REQUIRE(e2e::sh("APISERVER_EXTRA_ARGS=--watch-cache=false bash '" ASOP_SOURCE_DIR
                  "/test/controlplane/up.sh' '" +
                  dir + "' >&2")
              .status == 0);
  const auto kubeconfig = dir + "/kubeconfig";
  const auto ns = e2e::unique_name("compact");
  REQUIRE(e2e::kubectl("create namespace " + ns, kubeconfig).status == 0);

  asio::io_context io;
  TestController tc(io, kubeconfig, ns);
  auto& seen = tc.reconciler->value;
  REQUIRE(e2e::run_until(
      io, [&] { return tc.informer->has_synced(); }, 30s));
  REQUIRE(e2e::kubectl("create configmap a -n " + ns + " --from-literal=v=1", kubeconfig).status ==
          0);
  REQUIRE(e2e::run_until(
      io, [&] { return seen[ns + "/a"] == "1"; }, 30s));
  CHECK(tc.informer->lists_completed() == 1);

  // Writes elsewhere move etcd past the informer's resourceVersion; compact up to now.
  REQUIRE(
      e2e::kubectl("create configmap elsewhere -n default --from-literal=v=x", kubeconfig).status ==
      0);
  // Two writes: etcd keeps the compaction revision itself, so the watch must start before it.
  REQUIRE(e2e::kubectl("label configmap elsewhere -n default again=yes", kubeconfig).status == 0);
  const auto etcd = e2e::sh("cat '" + dir + "/etcd-url'").out;
  const std::string url = etcd.substr(0, etcd.find_first_of("\r\n"));
  auto range = e2e::sh("curl -fsS -X POST -d '{\"key\":\"AA==\"}' " + url + "/v3/kv/range");
  REQUIRE(range.status == 0);
  auto rev_at = range.out.find("\"revision\":\"");
  REQUIRE(rev_at != std::string::npos);
  const auto revision =
      range.out.substr(rev_at + 12, range.out.find('"', rev_at + 12) - rev_at - 12);
  REQUIRE(e2e::sh("curl -fsS -X POST -d '{\"revision\":" + revision + ",\"physical\":true}' " +
                  url + "/v3/kv/compaction >/dev/null")
              .status == 0);

  // Cut the watch: the informer re-watches from its old resourceVersion, gets 410, relists.
  REQUIRE(e2e::sh("kill -KILL $(cat '" + dir + "/run/kube-apiserver.pid')").status == 0);
  REQUIRE(e2e::sh("bash '" ASOP_SOURCE_DIR "/test/controlplane/up.sh' '" + dir + "' >&2").status ==
          0);
  REQUIRE(e2e::kubectl("create configmap b -n " + ns + " --from-literal=v=2", kubeconfig).status ==
          0);
  REQUIRE(e2e::run_until(
      io, [&] { return seen[ns + "/b"] == "2"; }, 90s));
  REQUIRE(e2e::run_until(
      io, [&] { return tc.informer->lists_completed() >= 2; }, 30s));
  CHECK(seen[ns + "/a"] == "1");
}
