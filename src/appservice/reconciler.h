// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/appservice/: the domain: spec parsing and validation, desired-state builders, child
// comparison, conditions, the reconciler. May use: src/ctrl/, src/ctrl/base/, src/ctrl/object/,
// src/ctrl/metrics/, src/ctrl/cache/, src/ctrl/events/, src/kube/api/, src/kube/core/ (the Rooms
// table in docs/architecture.md).

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "appservice/app_service.h"
#include "appservice/conditions.h"
#include "ctrl/base/clock.h"
#include "ctrl/cache/object_store.h"
#include "ctrl/events/event_recorder.h"
#include "ctrl/reconciler.h"
#include "kube/core/api_error.h"

namespace appservice {

inline constexpr std::string_view kFinalizer = "app.example.com/cleanup";
inline constexpr std::string_view kFieldManager = "appservice-operator";
// Set on the owner by the garbage collector's protocol for `kubectl delete --cascade=...`.
inline constexpr std::string_view kOrphanFinalizer = "orphan";
inline constexpr std::string_view kForegroundFinalizer = "foregroundDeletion";

// Keeps one AppService's Deployment and Service true, its status current, and its deletion clean.
// Reads only the caches (and the API server only where a cache cannot tell); writes only what
// differs, so the steady state makes no writes, ownership conflicts included.
//
// Every field of a child is owned by one field manager's server-side apply entry, from the first
// write on, so the applied configuration is the desired state and a field dropped from the spec
// leaves the child. A child is made with an apply that only creates (kube::RestClient::
// apply_create: a same-named object of someone else is refused, never taken over); later writes
// are applies carrying the child's uid, which the API server checks. A child that still has a
// create's "Update" entry of ours (an earlier build made it with a POST) has it folded into the
// apply entry before the next apply.
//
// The finalizer switch, on (has finalizer, being deleted):
//   (no,  no)  add the finalizer and return: the update brings the key back
//   (yes, no)  apply children, write status
//   (yes, yes) delete our children as the deletion's propagation policy says (none for orphan,
//              foreground children for foreground), then remove the finalizer (guarded)
//   (no,  yes) nothing: other finalizers are someone else's business
class AppServiceReconciler final : public ctrl::Reconciler {
 public:
  struct Sources {
    const ctrl::ObjectStore* app_services = nullptr;
    // The children's caches must keep who wrote each child (project_deployment/project_service
    // as the informers' transforms keep that of managedFields): a create's "Update" entry of ours
    // is seen there and folded. Without managedFields a child looks already folded.
    const ctrl::ObjectStore* deployments = nullptr;
    const ctrl::ObjectStore* services = nullptr;
  };

  // Reads and writes go through each reconcile's ctrl::Client (ReconcileContext::client), which
  // records every write for read-your-own-writes.
  AppServiceReconciler(Sources sources, ctrl::EventRecorder& events, const ctrl::Clock& clock);

  boost::asio::awaitable<ctrl::ReconcileResult> reconcile(
      ctrl::Request request, const ctrl::ReconcileContext& context) override;

  // How long until a standing ownership conflict is looked at again (the foreign object is outside
  // the label-filtered cache, so no event says it went away).
  static constexpr std::chrono::seconds kConflictRecheck{30};

 private:
  struct Child;
  struct Outcome;

  Child deployment_child() const;
  Child service_child() const;

  boost::asio::awaitable<ctrl::ReconcileResult> add_finalizer(const rapidjson::Value& object,
                                                              const ctrl::ReconcileContext& ctx);
  boost::asio::awaitable<ctrl::ReconcileResult> finalize(const rapidjson::Value& object,
                                                         const AppService& app,
                                                         const ctrl::ReconcileContext& ctx);
  boost::asio::awaitable<Outcome> ensure_child(const Child& child, const AppService& app,
                                               bool recheck_conflict,
                                               const ctrl::ReconcileContext& ctx);
  boost::asio::awaitable<Outcome> remove_child(const Child& child, const AppService& app,
                                               std::string propagation,
                                               const ctrl::ReconcileContext& ctx);
  // Writes the status these inputs give, if it differs, after announce_degraded.
  boost::asio::awaitable<std::optional<kube::ApiError>> write_status(
      const rapidjson::Value& object, const AppService& app, const StatusInputs& inputs,
      const ctrl::ReconcileContext& ctx);
  // Events for a change of Degraded: a Warning when it turns True or its cause changes, a Normal
  // one when it clears.
  void announce_degraded(const AppService& app, const std::vector<Condition>& previous,
                         const AppServiceStatus& status);
  void event(const AppService& app, ctrl::EventType type, std::string reason, std::string message);

  // The Degraded condition last announced per AppService (namespace/name), with the uid it was
  // for; dropped when the AppService is gone.
  struct Announced {
    std::string uid;
    Condition degraded;
  };

  Sources sources_;
  ctrl::EventRecorder& events_;
  const ctrl::Clock& clock_;
  std::unordered_map<std::string, Announced> announced_;
};

}  // namespace appservice
