// SPDX-License-Identifier: Apache-2.0
#include "appservice/reconciler.h"

#include <glog/logging.h>

#include "appservice/child_match.h"
#include "appservice/desired_state.h"
#include "appservice/spec_parser.h"
#include "ctrl/client.h"
#include "ctrl/events/event.h"
#include "ctrl/object/finalizers.h"
#include "ctrl/object/managed_fields_upgrade.h"
#include "ctrl/object/object_meta.h"
#include "kube/core/json_access.h"

namespace appservice {
namespace asio = boost::asio;
using ctrl::EventType;
using ctrl::ReconcileResult;
using namespace std::chrono_literals;

namespace {

const auto kAppServices = kube::ResourcePath::from_api_version(kApiVersion, "appservices");
const auto kDeployments = kube::ResourcePath::from_api_version("apps/v1", "deployments");
const auto kServices = kube::ResourcePath::from_api_version("v1", "services");

// A child whose deletion ran into a newer version of it than the cache had: look again soon.
constexpr std::chrono::milliseconds kStaleRetry{1000};

// The reconcile's door to the caches and the API server (ctrl::Client).
ctrl::Client& client_of(const ctrl::ReconcileContext& ctx) {
  CHECK(ctx.client) << ctx.log_prefix << ": the controller gives every reconcile a ctrl::Client";
  return *ctx.client;
}

// The namespace lifecycle admission plugin's refusal of new objects in a terminating namespace.
bool namespace_terminating(const kube::ApiError& error) {
  if (!error.is(kube::Errc::forbidden)) return false;
  for (const auto& cause : error.causes) {
    if (cause.type == "NamespaceTerminating") return true;
  }
  return false;
}

// The object's spec.selector, or null.
const rapidjson::Value* selector_of(const rapidjson::Value& object) {
  return kube::json::member(kube::json::member(&object, "spec"), "selector");
}

std::string selector_text(const rapidjson::Value& object) {
  const auto* found = selector_of(object);
  if (!found) return "(none)";
  const auto& selector = *found;
  std::string out;
  auto labels = selector.FindMember("matchLabels");
  if (labels != selector.MemberEnd() && labels->value.IsObject()) {
    for (const auto& m : labels->value.GetObject()) {
      if (!out.empty()) out += ",";
      out +=
          std::string(m.name.GetString()) + "=" + (m.value.IsString() ? m.value.GetString() : "?");
    }
  }
  if (selector.HasMember("matchExpressions")) out += out.empty() ? "(expressions)" : ",...";
  return out.empty() ? "(empty)" : out;
}

// The labels every child of ours carries: our selector label naming the AppService, and managed-by.
bool carries_our_labels(const rapidjson::Value& object, const AppService& app) {
  const auto* labels = kube::json::member(kube::json::member(&object, "metadata"), "labels");
  auto label = [&](std::string_view key) {
    return kube::json::string_view(kube::json::member(labels, std::string(key).c_str()));
  };
  return label(kSelectorLabel) == app.name && label(kManagedByLabel) == kManagedBy;
}

// A Deployment's spec.selector is immutable: one that differs from ours can only be recreated.
std::string deployment_recreate_reason(const rapidjson::Value& desired,
                                       const rapidjson::Value& live) {
  static const rapidjson::Value kNull;
  const auto& want = desired["spec"]["selector"];
  const auto* found = selector_of(live);
  const rapidjson::Value& have = found ? *found : kNull;
  if (want == have) return {};
  return "its selector " + selector_text(live) + " is immutable and differs from " +
         selector_text(desired);
}

}  // namespace

// One kind of child: where it lives, how to build and compare it, and where it is cached.
struct AppServiceReconciler::Child {
  const char* kind;
  kube::ResourcePath path;
  const ctrl::ObjectStore* store;
  rapidjson::Document (*build)(const AppService&);
  bool (*matches)(const rapidjson::Value&, const rapidjson::Value&);
  // Why the live child cannot be changed into the desired one in place; empty when it can.
  std::string (*recreate_reason)(const rapidjson::Value& desired, const rapidjson::Value& live);
};

AppServiceReconciler::Child AppServiceReconciler::deployment_child() const {
  return {"Deployment",        kDeployments,        sources_.deployments,
          &desired_deployment, &deployment_matches, &deployment_recreate_reason};
}

AppServiceReconciler::Child AppServiceReconciler::service_child() const {
  return {"Service", kServices, sources_.services, &desired_service, &service_matches, nullptr};
}

struct AppServiceReconciler::Outcome {
  Outcome() = default;  // not an aggregate: GCC 12 co_await temporaries (kube/list_options.h)
  // Our child as last seen or written (also when a write to it failed); null when there is none
  // of ours.
  std::shared_ptr<const rapidjson::Document> object;
  bool foreign = false;  // an object of the child's name that is not ours exists
  ReconcileIssue issue = ReconcileIssue::none;
  std::string reason;  // reconcile_error: the child's kind and the verb, "DeploymentApplyFailed"
  std::string message;
  bool retry_soon = false;  // the cache was behind the server: reconcile again shortly
};

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

asio::awaitable<AppServiceReconciler::Outcome> AppServiceReconciler::ensure_child(
    const Child& child, const AppService& app, bool recheck_conflict,
    const ctrl::ReconcileContext& ctx) {
  ctrl::Client& client = client_of(ctx);  // carries this reconcile's deadline
  Outcome out;
  const std::string key = app.namespace_ + "/" + app.name;
  const std::string what = std::string(child.kind) + " " + key;
  auto desired = child.build(app);
  auto path = child.path.in_namespace(app.namespace_).named(app.name);
  std::shared_ptr<const rapidjson::Document> live = child.store->get(key);
  bool ours = false;  // live is ours (or ours to adopt): the status may describe it
  // A failed request: Degraded names the child and the verb; the status keeps describing our live
  // child, which is still there and serving whatever the API server refused.
  auto fail = [&](std::string_view verb, std::string_view doing, const kube::ApiError& error) {
    out.issue = ReconcileIssue::reconcile_error;
    out.reason = std::string(child.kind) + std::string(verb) + "Failed";
    out.message = std::string(doing) + " " + what + ": " + error.describe();
    if (ours) out.object = live;
    return out;
  };
  // Applies the desired body with metadata.uid set: the API server refuses it (uid is immutable)
  // unless the object is still the one we checked, so a child deleted and recreated by someone
  // else in between is not taken over.
  auto apply_with_uid = [&](std::string_view uid, std::string why) {
    rapidjson::Document body;
    body.CopyFrom(desired, body.GetAllocator());
    body["metadata"].AddMember(
        "uid",
        rapidjson::Value(uid.data(), static_cast<rapidjson::SizeType>(uid.size()),
                         body.GetAllocator()),
        body.GetAllocator());
    return client.apply(path, kube::JsonBody(body), kFieldManager, std::move(why));
  };

  // The cache keeps only a summary of managedFields; an object read from the server has them all.
  bool whole = false;
  if (!live && recheck_conflict) {
    auto got = co_await client.get_live(path);
    if (got) {
      live = got->body;
      whole = true;
    } else if (!got.error().is(kube::Errc::not_found)) {
      co_return fail("Get", "reading", got.error());
    }
  }
  if (!live) {
    // Not in our cache, which holds only children labelled as ours. Created by an apply that
    // refuses an object of that name that exists (someone else's is refused, never taken over),
    // so our Apply entry owns every field from the start: a later apply can remove any of them
    // without first folding a create's Update entry into it (a write per child, issue 27).
    auto created = co_await client.apply_create(path, desired, kFieldManager,
                                                what + " not in the cache: creating it");
    if (created) {
      LOG(INFO) << ctx.log_prefix << " created " << what;
      event(app, EventType::normal, "Created", "Created " + what);
      out.object = created->body;
      co_return out;
    }
    if (namespace_terminating(created.error())) {
      // The namespace is going away with everything in it: nothing to create, nothing to retry.
      LOG(INFO) << ctx.log_prefix << " not creating " << what << ": namespace is being terminated";
      co_return out;
    }
    // 409 Conflict: it exists (refused for the resourceVersion, or for a field another manager
    // owns).
    if (!created.error().is(kube::Errc::conflict))
      co_return fail("Create", "creating", created.error());
    auto got = co_await client.get_live(path);
    if (!got) co_return fail("Get", "reading", got.error());
    live = got->body;  // it exists: ours with its labels edited away, a lagging cache, or foreign
    whole = true;
  }

  auto owner = ctrl::controller_owner(*live);
  const std::string recreate =
      child.recreate_reason ? child.recreate_reason(desired, *live) : std::string();
  // Our own orphan (left by `kubectl delete --cascade=orphan`, or made before its owner), as
  // Kubernetes' ControllerRefManager sees one: no controller, our selector and managed-by labels,
  // and a selector we can keep (adopting a child only to delete it is no adoption). Anything else
  // of the name is someone else's and is never taken over.
  const bool orphan_of_ours = !owner && carries_our_labels(*live, app);
  if (orphan_of_ours && ctrl::meta_being_deleted(*live))
    co_return out;  // going away: its event comes back
  const bool adopt = orphan_of_ours && recreate.empty();
  if (adopt) {
    // ControllerRefManager's canAdopt: the owner, read from the server rather than the cache,
    // must still be this AppService and not being deleted. Otherwise a reconcile of a stale copy
    // would adopt the children an orphan delete just released, and they would go with it.
    auto fresh =
        co_await client.get_live(kAppServices.in_namespace(app.namespace_).named(app.name));
    if (!fresh && !fresh.error().is(kube::Errc::not_found)) {
      co_return fail("Get", "reading the AppService before adopting", fresh.error());
    }
    if (!fresh || ctrl::meta_uid(*fresh->body) != app.uid ||
        ctrl::meta_being_deleted(*fresh->body)) {
      // The cache is behind: its next event decides. Until then the status keeps describing the
      // child that runs with our labels, as it did before.
      out.object = live;
      out.retry_soon = true;
      co_return out;
    }
  }
  if (!adopt && (!owner || owner->uid != app.uid)) {
    out.issue = ReconcileIssue::ownership_conflict;
    out.message = what + " exists and is not controlled by this AppService" +
                  (owner ? " (controller: " + owner->kind + "/" + owner->name + ")" : "");
    out.foreign = true;
    co_return out;
  }
  ours = true;
  if (ctrl::meta_being_deleted(*live)) {
    // Going away (a user's delete, or our recreate): its deletion event brings the key back. Until
    // it is gone it still runs, and the status says so.
    out.object = live;
    co_return out;
  }
  if (!recreate.empty()) {
    kube::DeleteOptions options;
    options.propagation_policy = "Background";
    options.precondition_uid = std::string(ctrl::meta_uid(*live));
    options.precondition_resource_version = std::string(ctrl::meta_resource_version(*live));
    auto deleted =
        co_await client.remove(path, options, "deleting " + what + " to recreate it: " + recreate);
    if (!deleted) {
      if (deleted.error().is(kube::Errc::not_found) || deleted.error().is(kube::Errc::conflict)) {
        out.retry_soon = true;
        co_return out;
      }
      co_return fail("Delete", "deleting", deleted.error());
    }
    LOG(INFO) << ctx.log_prefix << " deleted " << what << " to recreate it: " << recreate;
    event(app, EventType::normal, "Recreating", "Deleted " + what + " to recreate it: " + recreate);
    co_return out;  // its deletion event brings the key back, and the next pass creates it
  }
  if (child.matches(desired, *live)) {
    out.object = live;
    co_return out;  // nothing to write
  }
  if (ctrl::needs_managed_fields_upgrade(*live, kFieldManager)) {
    // A create's "Update" entry of ours still owns fields (our own create, which is folded only
    // now that an apply is due, or an older version's): fold it into our apply entry first, so
    // the apply below owns, and can remove, every field. The fold needs the whole managedFields,
    // read from the same object the cache showed us.
    if (!whole) {
      auto got = co_await client.get_live(path);
      if (!got) co_return fail("Get", "reading", got.error());
      if (ctrl::meta_uid(*got->body) != ctrl::meta_uid(*live)) {
        // Replaced since we cached it: decide on the new one soon; the status keeps what the
        // cache shows until then (no flap to "not found").
        out.object = live;
        out.retry_soon = true;
        co_return out;
      }
      live = got->body;
    }
    if (auto patch = ctrl::upgrade_managed_fields_patch(*live, kFieldManager)) {
      auto migrated = co_await client.patch(
          path, kube::PatchType::json, kube::JsonBody(*patch),
          "folding the Update entry of ours in " + what + " into our Apply entry");
      if (!migrated) co_return fail("Patch", "migrating field ownership of", migrated.error());
      LOG(INFO) << ctx.log_prefix << " migrated field ownership of " << what
                << " to server-side apply";
      live = migrated->body;
    }
  }
  std::string why = adopt ? "adopting " + what + ", an orphan with our labels"
                          : what + " differs from the spec at " + child_difference(desired, *live);
  auto applied = co_await apply_with_uid(ctrl::meta_uid(*live), std::move(why));
  if (!applied) co_return fail("Apply", "applying", applied.error());
  if (adopt) {
    LOG(INFO) << ctx.log_prefix << " adopted " << what;
    event(app, EventType::normal, "Adopted",
          "Adopted " + what + ": it had no controller and carries this AppService's labels");
  } else if (ctrl::meta_resource_version(*applied->body) != ctrl::meta_resource_version(*live)) {
    LOG(INFO) << ctx.log_prefix << " updated " << what << " (drift or spec change)";
    event(app, EventType::normal, "Updated", "Updated " + what);
  }
  out.object = applied->body;
  co_return out;
}

asio::awaitable<AppServiceReconciler::Outcome> AppServiceReconciler::remove_child(
    const Child& child, const AppService& app, std::string propagation,
    const ctrl::ReconcileContext& ctx) {
  Outcome out;
  const std::string key = app.namespace_ + "/" + app.name;
  const std::string what = std::string(child.kind) + " " + key;
  auto live = child.store->get(key);
  if (!live || ctrl::meta_being_deleted(*live)) co_return out;
  auto owner = ctrl::controller_owner(*live);
  if (!owner || owner->uid != app.uid) co_return out;  // not ours: leave it alone
  kube::DeleteOptions options;
  options.propagation_policy = std::move(propagation);
  // Also the resourceVersion: if the garbage collector orphaned it since we cached it, the delete
  // is refused and the next pass sees that it is not ours any more.
  options.precondition_uid = std::string(ctrl::meta_uid(*live));
  options.precondition_resource_version = std::string(ctrl::meta_resource_version(*live));
  std::string why = app.being_deleted
                        ? "the AppService is being deleted: deleting " + what + " (propagation " +
                              options.propagation_policy + ")"
                        : "the spec needs no " + std::string(child.kind) + ": deleting " + what;
  const auto path = child.path.in_namespace(app.namespace_).named(app.name);
  auto deleted = co_await client_of(ctx).remove(path, options, std::move(why));
  if (!deleted) {
    if (deleted.error().is(kube::Errc::not_found)) co_return out;  // already gone: no event
    if (deleted.error().is(kube::Errc::conflict)) {
      out.retry_soon = true;
      co_return out;
    }
    out.issue = ReconcileIssue::reconcile_error;
    out.reason = std::string(child.kind) + "DeleteFailed";
    out.message = "deleting " + what + ": " + deleted.error().describe();
    co_return out;
  }
  LOG(INFO) << ctx.log_prefix << " deleted " << what << " (propagation "
            << options.propagation_policy << ")";
  event(app, EventType::normal, "Deleted", "Deleted " + what);
  co_return out;
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
