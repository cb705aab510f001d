// SPDX-License-Identifier: Apache-2.0
// appservice-operator: flags and wiring only. The common set-up (flags, config, manager, exit
// codes) is ctrl::App; this file names the caches and the one controller.
#include <string>

#include "appservice/app_service.h"
#include "appservice/cache_projection.h"
#include "appservice/condition_metrics.h"
#include "appservice/desired_state.h"
#include "appservice/reconciler.h"
#include "ctrl/app/app.h"
#include "ctrl/kind.h"
#include "ctrl/object/object_meta.h"

namespace {

constexpr const char* kUsage = R"(usage: appservice-operator [flags]

Keeps every AppService (app.example.com/v1) backed by an owned Deployment and Service.

  --kubeconfig PATH                 kubeconfig file (else $KUBECONFIG, in-cluster, ~/.kube/config)
  --context NAME                    kubeconfig context (default: current-context)
  --namespace NS                    watch only this namespace (default: all)
  --label-selector SEL              reconcile only AppServices matching SEL (sharding)
  --max-concurrent-reconciles N     parallel reconciles (default 4)
  --leader-elect                    elect a leader with a coordination.k8s.io Lease
  --leader-election-namespace NS    namespace of the Lease (default: the pod's/context's)
  --leader-election-id NAME         name of the Lease (default appservice-operator.app.example.com)
  --leader-elect-lease-duration D   (default 15s)
  --leader-elect-renew-deadline D   (default 10s)
  --leader-elect-retry-period D     (default 2s)
  --metrics-bind-address ADDR       Prometheus /metrics (default :8443 with --metrics-secure,
                                    else :8080; 0 disables)
  --metrics-secure                  serve /metrics over HTTPS, only to bearer tokens allowed to
                                    get /metrics (TokenReview + SubjectAccessReview)
  --metrics-cert-path DIR           certificate directory for secure metrics, reloaded when its
                                    files change (default: a self-signed certificate made at start)
  --metrics-cert-name NAME          certificate file in DIR (default tls.crt)
  --metrics-cert-key NAME           key file in DIR (default tls.key)
  --health-probe-bind-address ADDR  /healthz and /readyz (default :8081, 0 disables)
  --watch-list=BOOL                 fill the caches by streaming lists over a watch
                                    (sendInitialEvents, default true); lists in pages where the
                                    API server does not serve them (before 1.27, or WatchList off)
  --list-page-size N                page size of lists when not streamed (default 500)
  --reconcile-timeout D             end each reconcile's API requests after D; counted in
                                    controller_runtime_reconcile_timeouts_total and retried with
                                    backoff (default 0: none, as controller-runtime)
  --sync-period D                   reconcile every AppService again this often (default 10h,
                                    jittered by +-10%), so a change a watch missed is repaired
  --cache-sync-timeout D            exit 1 if a cache has not synced by then (default 2m)
  -v N                              log verbosity (glog)
  --version, --help
)";

}  // namespace

int main(int argc, char** argv) {
  ctrl::App app(
      {"appservice-operator", ASOP_VERSION, kUsage, "appservice-operator.app.example.com"});
  if (auto exit_code = app.init(argc, argv)) return *exit_code;
  auto& manager = app.manager();
  const ctrl::Kind app_service(std::string(appservice::kApiVersion), std::string(appservice::kKind),
                               "appservices");
  // Children are cached only when labelled as ours: the cache stays small on a busy cluster.
  const std::string ours =
      std::string(appservice::kManagedByLabel) + "=" + std::string(appservice::kManagedBy);
  // Each cache keeps only the fields the reconciler reads (appservice/cache_projection.h).
  auto& apps = manager.informer(app_service, app.flags().label_selector,
                                [](rapidjson::Document& d) { appservice::project_app_service(d); });
  auto& deployments =
      manager.informer({"apps/v1", "Deployment", "deployments"}, ours,
                       [](rapidjson::Document& d) { appservice::project_deployment(d); });
  auto& services = manager.informer({"v1", "Service", "services"}, ours,
                                    [](rapidjson::Document& d) { appservice::project_service(d); });
  appservice::register_condition_metrics(app.metrics(), apps.store());

  auto& events = app.events();
  appservice::AppServiceReconciler reconciler(
      {&apps.store(), &deployments.store(), &services.store()}, events, app.clock());
  // Owners outside this process's cache (another shard's) are not ours to reconcile: owns() only
  // queues owners in the AppService cache.
  app.controller("appservice")
      .for_kind(app_service, apps, ctrl::Controller::Updates::skip_status_only)
      .owns(deployments)
      .owns(services)
      .complete(reconciler);
  // A deleted AppService's uid never comes back: its Event bookkeeping goes with it.
  apps.add_handler([&events](const ctrl::StoreChange& change) {
    const auto& last = change.new_object ? change.new_object : change.old_object;
    if (change.type == ctrl::StoreChange::Type::deleted && last) {
      events.forget(std::string(ctrl::meta_uid(*last)));
    }
  });
  return app.run();
}
