#pragma once

#include <memory>
#include <optional>
#include <string>

#include "appservice/app_service.h"
#include "appservice/conditions.h"
#include "ctrl/clock.h"
#include "ctrl/event_recorder.h"
#include "ctrl/informer.h"
#include "ctrl/reconciler.h"
#include "kube/rest_client.h"

namespace appservice {

inline constexpr std::string_view kFinalizer = "app.example.com/cleanup";
inline constexpr std::string_view kFieldManager = "appservice-operator";

// Keeps one AppService's Deployment and Service true, its status current, and its deletion clean.
// Reads only the informer caches; writes only what differs (zero writes in steady state).
//
// The finalizer switch, on (has finalizer, being deleted):
//   (no,  no)  add the finalizer and return: the update brings the key back
//   (yes, no)  apply children, write status
//   (yes, yes) delete our children (404 is fine), then remove the finalizer (guarded)
//   (no,  yes) nothing: other finalizers are someone else's business
class AppServiceReconciler final : public ctrl::Reconciler {
 public:
  struct Sources {
    const ctrl::Informer* app_services = nullptr;
    const ctrl::Informer* deployments = nullptr;
    const ctrl::Informer* services = nullptr;
  };

  AppServiceReconciler(Sources sources, std::shared_ptr<kube::RestClient> client,
                       ctrl::EventRecorder& events, const ctrl::Clock& clock);

  boost::asio::awaitable<ctrl::ReconcileResult> reconcile(
      ctrl::Request request, const ctrl::ReconcileContext& context) override;

 private:
  struct Child;
  struct Outcome;

  Child deployment_child() const;
  Child service_child() const;

  boost::asio::awaitable<ctrl::ReconcileResult> add_finalizer(const rapidjson::Value& object,
                                                              const AppService& app,
                                                              const ctrl::ReconcileContext& ctx);
  boost::asio::awaitable<ctrl::ReconcileResult> finalize(const AppService& app,
                                                         const ctrl::ReconcileContext& ctx);
  boost::asio::awaitable<Outcome> ensure_child(const Child& child, const AppService& app,
                                               const ctrl::ReconcileContext& ctx);
  boost::asio::awaitable<Outcome> remove_child(const Child& child, const AppService& app,
                                               const ctrl::ReconcileContext& ctx);
  boost::asio::awaitable<std::optional<kube::ApiError>> write_status(
      const rapidjson::Value& object, const AppService& app, StatusInputs inputs,
      const ctrl::ReconcileContext& ctx);
  void event(const AppService& app, ctrl::EventType type, std::string reason, std::string message);

  Sources sources_;
  std::shared_ptr<kube::RestClient> client_;
  ctrl::EventRecorder& events_;
  const ctrl::Clock& clock_;
};

}  // namespace appservice
