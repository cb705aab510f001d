// SPDX-License-Identifier: Apache-2.0
// AppServiceReconciler's children: the Deployment and the Service made, kept as the spec says,
// adopted, recreated or deleted, and never one that someone else controls.
#include <glog/logging.h>

#include "appservice/child_match.h"
#include "appservice/desired_state.h"
#include "appservice/reconciler.h"
#include "appservice/reconciler_parts.h"
#include "ctrl/object/managed_fields_upgrade.h"
#include "ctrl/object/object_meta.h"
#include "kube/core/json_access.h"

namespace appservice {
namespace asio = boost::asio;
using ctrl::EventType;

namespace {

const auto kDeployments = kube::ResourcePath::from_api_version("apps/v1", "deployments");
const auto kServices = kube::ResourcePath::from_api_version("v1", "services");

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

AppServiceReconciler::Child AppServiceReconciler::deployment_child() const {
  return {"Deployment",        kDeployments,        sources_.deployments,
          &desired_deployment, &deployment_matches, &deployment_recreate_reason};
}

AppServiceReconciler::Child AppServiceReconciler::service_child() const {
  return {"Service", kServices, sources_.services, &desired_service, &service_matches, nullptr};
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
  if (orphan_of_ours && ctrl::meta_deleting(*live))
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
    if (!fresh || ctrl::meta_uid(*fresh->body) != app.uid || ctrl::meta_deleting(*fresh->body)) {
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
  if (ctrl::meta_deleting(*live)) {
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
  if (!live || ctrl::meta_deleting(*live)) co_return out;
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

}  // namespace appservice
