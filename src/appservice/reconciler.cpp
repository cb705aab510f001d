// SPDX-License-Identifier: Apache-2.0
// AppServiceReconciler: the flow of a reconcile, the status and its Events. The children are in
// reconciler_children.cpp, the finalizer and the cleanup in reconciler_deletion.cpp.
#include "appservice/reconciler.h"

#include <glog/logging.h>

#include "appservice/desired_state.h"
#include "appservice/reconciler_parts.h"
#include "appservice/spec_parser.h"
#include "ctrl/events/event.h"
#include "ctrl/object/finalizers.h"
#include "ctrl/object/object_meta.h"

namespace appservice {
namespace asio = boost::asio;
using ctrl::EventType;
using ctrl::ReconcileResult;

AppServiceReconciler::AppServiceReconciler(Sources sources, ctrl::EventRecorder& events,
                                           const ctrl::Clock& clock)
    : sources_(sources), events_(events), clock_(clock) {
  CHECK(sources_.app_services && sources_.deployments && sources_.services);
}

void AppServiceReconciler::event(const AppService& app, EventType type, std::string reason,
                                 std::string message) {
  events_.record(ctrl::ObjectReference(std::string(kApiVersion), std::string(kKind), app.namespace_,
                                       app.name, app.uid),
                 type, std::move(reason), std::move(message));
}

void AppServiceReconciler::announce_degraded(const AppService& app,
                                             const std::vector<Condition>& previous,
                                             const AppServiceStatus& status) {
  const Condition* now = nullptr;
  for (const auto& c : status.conditions) {
    if (c.type == kDegraded) now = &c;
  }
  if (!now) return;
  // What was announced last: our own record, when this process made one for this very object (a
  // retry 5 ms after a failure runs before our status write reaches the cache, and must not
  // announce the same cause again), else the status as the cache shows it (after a restart).
  const std::string key = app.namespace_ + "/" + app.name;
  const Condition* before = nullptr;
  auto mine = announced_.find(key);
  if (mine != announced_.end() && mine->second.uid == app.uid) {
    before = &mine->second.degraded;
  } else {
    for (const auto& c : previous) {
      if (c.type == kDegraded) before = &c;
    }
  }
  const bool was = before && before->status == "True";
  // Copied first: `before` may point into the record that is replaced below.
  const std::string before_reason = before ? before->reason : std::string();
  const std::string before_message = before ? before->message : std::string();
  announced_[key] = Announced{app.uid, *now};
  if (now->status == "True") {
    // One Warning per distinct cause. (A Deployment keeps its ReplicaFailure message while the
    // reason stays, so the ReplicaSet's retries, each naming another Pod, are one cause.)
    const bool new_cause = !was || before_reason != now->reason || before_message != now->message;
    if (new_cause) event(app, EventType::warning, now->reason, now->message);
  } else if (was) {
    if (before_reason == "OwnershipConflict") {
      event(app, EventType::normal, "ConflictResolved",
            "The children are controlled by this AppService now");
    } else {
      event(app, EventType::normal, "Recovered",
            "No longer degraded (was " + before_reason + "): " + now->message);
    }
  }
}

asio::awaitable<ReconcileResult> AppServiceReconciler::reconcile(
    ctrl::Request request, const ctrl::ReconcileContext& ctx) {
  auto object = sources_.app_services->get(request.key());
  if (!object) {
    // Gone: its children carry ownerReferences, so the garbage collector removes any leftovers.
    VLOG(1) << ctx.log_prefix << " AppService not found, nothing to do";
    announced_.erase(request.key());
    co_return ReconcileResult::done();
  }
  auto parsed = parse_app_service(*object);
  const AppService& app = parsed.app;

  switch (ctrl::finalizer_step(*object, kFinalizer)) {
    case ctrl::FinalizerStep::nothing:
      co_return ReconcileResult::done();
    case ctrl::FinalizerStep::clean_up:
      co_return co_await finalize(*object, app, ctx);
    case ctrl::FinalizerStep::add:
      co_return co_await add_finalizer(*object, ctx);
    case ctrl::FinalizerStep::apply:
      break;
  }

  const std::string now = ctrl::format_event_time(clock_.wall_now());  // inputs keep a view
  StatusInputs inputs(app, now);
  inputs.previous = parse_conditions(*object);
  const Condition* degraded = nullptr;
  for (const auto& c : inputs.previous) {
    if (c.type == kDegraded) degraded = &c;
  }

  if (!parsed.valid()) {
    inputs.issue = ReconcileIssue::invalid_spec;
    inputs.issue_message = parsed.problems_message();
    // Each read of the cache is a fresh DOM: held here until the status is written. Only our own
    // children describe the status.
    auto deployment = sources_.deployments->get(request.key());
    auto service = sources_.services->get(request.key());
    for (auto* child : {&deployment, &service}) {
      auto owner = *child ? ctrl::controller_owner(**child) : std::nullopt;
      if (*child && (!owner || owner->uid != app.uid)) {
        (child == &deployment ? inputs.deployment_foreign : inputs.service_foreign) = true;
        child->reset();
      }
    }
    inputs.deployment = deployment.get();
    inputs.service = service.get();
    LOG(WARNING) << ctx.log_prefix << " invalid spec: " << inputs.issue_message;
    if (auto error = co_await write_status(*object, app, inputs, ctx)) {
      co_return ReconcileResult::error(error->describe());
    }
    // Not retried: only a change to the object can fix it, and that brings the key back.
    co_return ReconcileResult::terminal("invalid spec: " + parsed.problems_message());
  }

  // A standing conflict is re-checked with reads: the foreign object is not in our cache, and a
  // refused create would be a write at rest.
  const bool in_conflict =
      degraded && degraded->status == "True" && degraded->reason == "OwnershipConflict";
  const Child deployment = deployment_child();
  const Child service = service_child();
  auto d = co_await ensure_child(deployment, app, in_conflict, ctx);
  // No co_await inside ?: : GCC 12 destroys the wrong temporary (seen under ASan).
  Outcome s;
  if (needs_service(app)) {
    s = co_await ensure_child(service, app, in_conflict, ctx);
  } else {
    s = co_await remove_child(service, app, "Background", ctx);
  }
  inputs.deployment = d.object.get();
  inputs.service = needs_service(app) ? s.object.get() : nullptr;
  inputs.deployment_foreign = d.foreign;
  inputs.deployment_write_failed = d.issue == ReconcileIssue::reconcile_error;
  inputs.service_foreign = needs_service(app) && s.foreign;
  for (auto* outcome : {&d, &s}) {
    if (outcome->issue != ReconcileIssue::none && inputs.issue == ReconcileIssue::none) {
      inputs.issue = outcome->issue;
      inputs.issue_reason = outcome->reason;
      inputs.issue_message = outcome->message;
    }
  }
  auto issue = inputs.issue;
  auto issue_message = inputs.issue_message;
  if (auto error = co_await write_status(*object, app, inputs, ctx)) {
    co_return ReconcileResult::error(error->describe());
  }
  switch (issue) {
    case ReconcileIssue::reconcile_error:
      co_return ReconcileResult::error(issue_message);
    case ReconcileIssue::ownership_conflict:
      co_return ReconcileResult::requeue(std::chrono::milliseconds(kConflictRecheck));
    default:
      break;
  }
  if (d.retry_soon || s.retry_soon) co_return ReconcileResult::requeue(kStaleRetry);
  co_return ReconcileResult::done();
}

asio::awaitable<std::optional<kube::ApiError>> AppServiceReconciler::write_status(
    const rapidjson::Value& object, const AppService& app, const StatusInputs& inputs,
    const ctrl::ReconcileContext& ctx) {
  const AppServiceStatus computed = compute_status(inputs);
  announce_degraded(app, inputs.previous, computed);
  auto status = status_to_json(computed);
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const auto it = object.FindMember("status");
  const rapidjson::Value& current = it != object.MemberEnd() ? it->value : kEmpty;
  if (status_equal(current, status)) co_return std::nullopt;  // nothing changed: no write

  rapidjson::Document body(rapidjson::kObjectType);
  body.AddMember("status", rapidjson::Value(status, body.GetAllocator()), body.GetAllocator());
  auto path = kAppServices.in_namespace(app.namespace_).named(app.name);
  auto result = co_await client_of(ctx).patch_status(
      path, kube::JsonBody(body), "status differs at " + status_difference(current, status));
  if (!result) {
    if (result.error().is(kube::Errc::not_found)) co_return std::nullopt;
    LOG(WARNING) << ctx.log_prefix << " status update failed: " << result.error().describe();
    co_return result.error();
  }
  VLOG(1) << ctx.log_prefix << " status updated";
  co_return std::nullopt;
}

}  // namespace appservice
