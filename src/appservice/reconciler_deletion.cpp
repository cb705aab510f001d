// SPDX-License-Identifier: Apache-2.0
// AppServiceReconciler's finalizer: added before the first child exists; on deletion the children
// go as the propagation policy says, then the finalizer, once (the Client holds the key until the
// object has left the cache).
#include <glog/logging.h>

#include "appservice/reconciler.h"
#include "appservice/reconciler_parts.h"
#include "ctrl/object/object_meta.h"

namespace appservice {
namespace asio = boost::asio;
using ctrl::EventType;
using ctrl::ReconcileResult;

asio::awaitable<ReconcileResult> AppServiceReconciler::add_finalizer(
    const rapidjson::Value& object, const ctrl::ReconcileContext& ctx) {
  const auto path =
      kAppServices.in_namespace(ctrl::meta_namespace(object)).named(ctrl::meta_name(object));
  auto result = co_await client_of(ctx).add_finalizer(path, object, kFinalizer);
  if (!result) {
    if (result.error().is(kube::Errc::not_found)) co_return ReconcileResult::done();
    co_return ReconcileResult::failed("adding finalizer", result.error());
  }
  LOG(INFO) << ctx.log_prefix << " added finalizer " << kFinalizer;
  co_return ReconcileResult::done();  // the update event brings the key back
}

asio::awaitable<ReconcileResult> AppServiceReconciler::finalize(const rapidjson::Value& object,
                                                                const AppService& app,
                                                                const ctrl::ReconcileContext& ctx) {
  // The deletion's propagation policy, as the API server tells the garbage collector: orphan
  // (the GC removes the children's ownerReferences; we delete nothing), foreground (the owner
  // stays until its children are gone, so they go in foreground too, Pods first), or background.
  const bool orphan = app.has_finalizer(kOrphanFinalizer);
  const bool foreground = app.has_finalizer(kForegroundFinalizer);
  if (!orphan) {
    // Works even if apply never ran: only children that name this AppService as controller go.
    const Child children[] = {deployment_child(), service_child()};
    bool retry_soon = false;
    for (const auto& child : children) {
      auto outcome =
          co_await remove_child(child, app, foreground ? "Foreground" : "Background", ctx);
      if (outcome.issue == ReconcileIssue::reconcile_error) {
        event(app, EventType::warning, outcome.reason, outcome.message);
        co_return ReconcileResult::error(outcome.message);
      }
      retry_soon = retry_soon || outcome.retry_soon;
    }
    // A child changed since we cached it (the GC may have orphaned it): decide on fresh data.
    if (retry_soon) co_return ReconcileResult::requeue(kStaleRetry);
  }
  // Remove only our entry, and only if it is still where we saw it: the server refuses (then we
  // retry) instead of dropping another writer's finalizer. The controller holds the key back
  // until the object has left the cache, so the cleanup runs once.
  auto path = kAppServices.in_namespace(app.namespace_).named(app.name);
  auto result = co_await client_of(ctx).remove_finalizer(
      path, object, kFinalizer,
      "being deleted, children done: removing finalizer " + std::string(kFinalizer));
  if (!result) {
    if (result.error().is(kube::Errc::not_found)) co_return ReconcileResult::done();
    co_return ReconcileResult::failed("removing finalizer", result.error());
  }
  const std::string what = "AppService " + app.namespace_ + "/" + app.name;
  if (orphan) {
    event(app, EventType::normal, "CleanupComplete",
          "Kept the children of " + what + " (orphan deletion): the garbage collector removes " +
              "their ownerReferences");
  } else {
    event(app, EventType::normal, "CleanupComplete", "Deleted the children of " + what);
  }
  LOG(INFO) << ctx.log_prefix << " cleanup complete"
            << (orphan       ? " (orphan: children kept)"
                : foreground ? " (foreground)"
                             : "")
            << ", finalizer removed";
  co_return ReconcileResult::done();
}

}  // namespace appservice
