#include "appservice/reconciler.h"

#include <glog/logging.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "appservice/child_match.h"
#include "appservice/desired_state.h"
#include "appservice/spec_parser.h"
#include "ctrl/event.h"
#include "ctrl/object_meta.h"

namespace appservice {
namespace asio = boost::asio;
using ctrl::EventType;
using ctrl::ReconcileResult;
using namespace std::chrono_literals;

namespace {

const auto kAppServices = kube::ResourcePath::from_api_version(kApiVersion, "appservices");
const auto kDeployments = kube::ResourcePath::from_api_version("apps/v1", "deployments");
const auto kServices = kube::ResourcePath::from_api_version("v1", "services");

std::string json_string(std::string_view s) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return buffer.GetString();
}

}  // namespace

// One kind of child: where it lives, how to build and compare it, and where it is cached.
struct AppServiceReconciler::Child {
  const char* kind;
  kube::ResourcePath path;
  const ctrl::Informer* informer;
  rapidjson::Document (*build)(const AppService&);
  bool (*matches)(const rapidjson::Value&, const rapidjson::Value&);
};

AppServiceReconciler::Child AppServiceReconciler::deployment_child() const {
  return {"Deployment", kDeployments, sources_.deployments, &desired_deployment,
          &deployment_matches};
}

AppServiceReconciler::Child AppServiceReconciler::service_child() const {
  return {"Service", kServices, sources_.services, &desired_service, &service_matches};
}

struct AppServiceReconciler::Outcome {
  Outcome() = default;  // not an aggregate: GCC 12 co_await temporaries (kube/list_options.h)
  std::shared_ptr<const rapidjson::Document> object;  // the child as last seen or written
  ReconcileIssue issue = ReconcileIssue::none;
  std::string message;
};

AppServiceReconciler::AppServiceReconciler(Sources sources,
                                           std::shared_ptr<kube::RestClient> client,
                                           ctrl::EventRecorder& events, const ctrl::Clock& clock)
    : sources_(sources), client_(std::move(client)), events_(events), clock_(clock) {
  CHECK(sources_.app_services && sources_.deployments && sources_.services);
}

void AppServiceReconciler::event(const AppService& app, EventType type, std::string reason,
                                 std::string message) {
  events_.record(ctrl::ObjectReference(std::string(kApiVersion), std::string(kKind), app.namespace_,
                                       app.name, app.uid),
                 type, std::move(reason), std::move(message));
}

asio::awaitable<ReconcileResult> AppServiceReconciler::reconcile(
    ctrl::Request request, const ctrl::ReconcileContext& ctx) {
  auto object = sources_.app_services->store().get(request.key());
  if (!object) {
    // Gone: its children carry ownerReferences, so the garbage collector removes any leftovers.
    VLOG(1) << ctx.log_prefix << " AppService not found, nothing to do";
    co_return ReconcileResult::done();
  }
  auto parsed = parse_app_service(*object);
  const AppService& app = parsed.app;

  if (app.being_deleted) {
    if (!app.has_finalizer(kFinalizer)) co_return ReconcileResult::done();
    co_return co_await finalize(app, ctx);
  }
  if (!app.has_finalizer(kFinalizer)) co_return co_await add_finalizer(*object, app, ctx);

  const std::string now = ctrl::format_event_time(clock_.wall_now());  // inputs keep a view
  StatusInputs inputs(app, now);
  inputs.previous = parse_conditions(*object);
  const Condition* degraded = nullptr;
  for (const auto& c : inputs.previous) {
    if (c.type == kDegraded) degraded = &c;
  }
  auto transition = [&](std::string_view reason, const std::string& message) {
    return !degraded || degraded->status != "True" || degraded->reason != reason ||
           degraded->message != message;
  };

  if (!parsed.valid()) {
    inputs.issue = ReconcileIssue::invalid_spec;
    inputs.issue_message = parsed.problems_message();
    inputs.deployment = sources_.deployments->store().get(request.key()).get();
    inputs.service = sources_.services->store().get(request.key()).get();
    if (transition("InvalidSpec", inputs.issue_message)) {
      event(app, EventType::warning, "InvalidSpec", inputs.issue_message);
    }
    LOG(WARNING) << ctx.log_prefix << " invalid spec: " << inputs.issue_message;
    if (auto error = co_await write_status(*object, app, std::move(inputs), ctx)) {
      co_return ReconcileResult::error(error->describe());
    }
    // Not retried: only a change to the object can fix it, and that brings the key back.
    co_return ReconcileResult::terminal("invalid spec: " + parsed.problems_message());
  }

  const Child deployment = deployment_child();
  const Child service = service_child();
  auto d = co_await ensure_child(deployment, app, ctx);
  // No co_await inside ?: : GCC 12 destroys the wrong temporary (seen under ASan).
  Outcome s;
  if (needs_service(app)) {
    s = co_await ensure_child(service, app, ctx);
  } else {
    s = co_await remove_child(service, app, ctx);
  }
  inputs.deployment = d.object.get();
  inputs.service = needs_service(app) ? s.object.get() : nullptr;
  for (auto* outcome : {&d, &s}) {
    if (outcome->issue != ReconcileIssue::none && inputs.issue == ReconcileIssue::none) {
      inputs.issue = outcome->issue;
      inputs.issue_message = outcome->message;
    }
  }
  if (inputs.issue == ReconcileIssue::ownership_conflict &&
      transition("OwnershipConflict", inputs.issue_message)) {
    event(app, EventType::warning, "OwnershipConflict", inputs.issue_message);
  }
  if (inputs.issue == ReconcileIssue::reconcile_error) {
    event(app, EventType::warning, "ReconcileError", inputs.issue_message);
  }
  auto issue = inputs.issue;
  auto issue_message = inputs.issue_message;
  if (auto error = co_await write_status(*object, app, std::move(inputs), ctx)) {
    co_return ReconcileResult::error(error->describe());
  }
  switch (issue) {
    case ReconcileIssue::reconcile_error:
      co_return ReconcileResult::error(issue_message);
    case ReconcileIssue::ownership_conflict:
      // The other owner's object is outside our label-filtered cache: look again later.
      co_return ReconcileResult::requeue(std::chrono::milliseconds(30s));
    default:
      co_return ReconcileResult::done();
  }
}

asio::awaitable<ReconcileResult> AppServiceReconciler::add_finalizer(
    const rapidjson::Value& object, const AppService& app, const ctrl::ReconcileContext& ctx) {
  // Guarded by resourceVersion so a concurrent writer's finalizer list is never overwritten.
  std::string patch = R"([{"op":"test","path":"/metadata/resourceVersion","value":)" +
                      json_string(app.resource_version) + "},";
  const auto& meta = object["metadata"];
  if (meta.HasMember("finalizers") && meta["finalizers"].IsArray()) {
    patch +=
        R"({"op":"add","path":"/metadata/finalizers/-","value":)" + json_string(kFinalizer) + "}]";
  } else {
    patch +=
        R"({"op":"add","path":"/metadata/finalizers","value":[)" + json_string(kFinalizer) + "]}]";
  }
  auto path = kAppServices.in_namespace(app.namespace_).named(app.name);
  auto result = co_await client_->patch(path, kube::PatchType::json, kube::JsonBody(patch));
  if (!result) {
    if (result.error().is(kube::Errc::not_found)) co_return ReconcileResult::done();
    co_return ReconcileResult::error("adding finalizer: " + result.error().describe());
  }
  LOG(INFO) << ctx.log_prefix << " added finalizer " << kFinalizer;
  co_return ReconcileResult::done();  // the update event brings the key back
}

asio::awaitable<ReconcileResult> AppServiceReconciler::finalize(const AppService& app,
                                                                const ctrl::ReconcileContext& ctx) {
  // Works even if apply never ran: only children that name this AppService as controller go.
  const Child children[] = {deployment_child(), service_child()};
  for (const auto& child : children) {
    auto outcome = co_await remove_child(child, app, ctx);
    if (outcome.issue == ReconcileIssue::reconcile_error) {
      event(app, EventType::warning, "ReconcileError", outcome.message);
      co_return ReconcileResult::error(outcome.message);
    }
  }
  // Remove only our entry, and only if it is still where we saw it: a JSON patch "test" makes the
  // server refuse (then we retry) instead of dropping another writer's finalizer.
  int index = 0;
  for (const auto& f : app.finalizers) {
    if (f == kFinalizer) break;
    ++index;
  }
  std::string at = "/metadata/finalizers/" + std::to_string(index);
  std::string patch = R"([{"op":"test","path":")" + at + R"(","value":)" + json_string(kFinalizer) +
                      R"(},{"op":"remove","path":")" + at + "\"}]";
  auto path = kAppServices.in_namespace(app.namespace_).named(app.name);
  auto result = co_await client_->patch(path, kube::PatchType::json, kube::JsonBody(patch));
  if (!result && !result.error().is(kube::Errc::not_found)) {
    co_return ReconcileResult::error("removing finalizer: " + result.error().describe());
  }
  event(app, EventType::normal, "CleanupComplete",
        "Deleted the children of AppService " + app.namespace_ + "/" + app.name);
  LOG(INFO) << ctx.log_prefix << " cleanup complete, finalizer removed";
  co_return ReconcileResult::done();
}

asio::awaitable<AppServiceReconciler::Outcome> AppServiceReconciler::ensure_child(
    const Child& child, const AppService& app, const ctrl::ReconcileContext& ctx) {
  Outcome out;
  const std::string key = app.namespace_ + "/" + app.name;
  const std::string what = std::string(child.kind) + " " + key;
  auto desired = child.build(app);
  auto path = child.path.in_namespace(app.namespace_).named(app.name);
  auto live = child.informer->store().get(key);
  bool create = !live;

  if (live) {
    auto owner = ctrl::controller_owner(*live);
    if (!owner || owner->uid != app.uid) {
      out.issue = ReconcileIssue::ownership_conflict;
      out.message = what + " exists and is not controlled by this AppService" +
                    (owner ? " (controller: " + owner->kind + "/" + owner->name + ")" : "");
      out.object = live;
      co_return out;
    }
    if (child.matches(desired, *live)) {
      out.object = live;
      co_return out;  // nothing to write
    }
  } else {
    // Not in our cache (which only holds labelled children): create, never apply, so an object of
    // the same name that someone else owns is refused with AlreadyExists instead of taken over.
    auto created =
        co_await client_->create(child.path.in_namespace(app.namespace_), kube::JsonBody(desired));
    if (created) {
      LOG(INFO) << ctx.log_prefix << " created " << what;
      event(app, EventType::normal, "Created", "Created " + what);
      out.object = created->body;
      co_return out;
    }
    if (!created.error().is(kube::Errc::already_exists)) {
      out.issue = ReconcileIssue::reconcile_error;
      out.message = "creating " + what + ": " + created.error().describe();
      co_return out;
    }
    auto existing = co_await client_->get(path);
    if (!existing) {
      out.issue = ReconcileIssue::reconcile_error;
      out.message = "reading " + what + ": " + existing.error().describe();
      co_return out;
    }
    auto owner = ctrl::controller_owner(*existing->body);
    if (!owner || owner->uid != app.uid) {
      out.issue = ReconcileIssue::ownership_conflict;
      out.message = what + " already exists and is not controlled by this AppService" +
                    (owner ? " (controller: " + owner->kind + "/" + owner->name + ")" : "");
      co_return out;
    }
    create = false;  // ours, but its labels were edited away: apply puts them back
  }

  auto applied = co_await client_->apply(path, kube::JsonBody(desired), kFieldManager);
  if (!applied) {
    out.issue = ReconcileIssue::reconcile_error;
    out.message = "applying " + what + ": " + applied.error().describe();
    co_return out;
  }
  LOG(INFO) << ctx.log_prefix << " updated " << what << " (drift or spec change)";
  if (!create) event(app, EventType::normal, "Updated", "Updated " + what);
  out.object = applied->body;
  co_return out;
}

asio::awaitable<AppServiceReconciler::Outcome> AppServiceReconciler::remove_child(
    const Child& child, const AppService& app, const ctrl::ReconcileContext& ctx) {
  Outcome out;
  const std::string key = app.namespace_ + "/" + app.name;
  const std::string what = std::string(child.kind) + " " + key;
  auto live = child.informer->store().get(key);
  if (!live) co_return out;
  auto owner = ctrl::controller_owner(*live);
  if (!owner || owner->uid != app.uid) co_return out;  // not ours: leave it alone
  kube::DeleteOptions options;
  options.propagation_policy = "Background";
  options.precondition_uid = std::string(ctrl::meta_uid(*live));
  auto deleted =
      co_await client_->delete_(child.path.in_namespace(app.namespace_).named(app.name), options);
  if (!deleted && !deleted.error().is(kube::Errc::not_found)) {
    out.issue = ReconcileIssue::reconcile_error;
    out.message = "deleting " + what + ": " + deleted.error().describe();
    co_return out;
  }
  LOG(INFO) << ctx.log_prefix << " deleted " << what;
  event(app, EventType::normal, "Deleted", "Deleted " + what);
  co_return out;
}

asio::awaitable<std::optional<kube::ApiError>> AppServiceReconciler::write_status(
    const rapidjson::Value& object, const AppService& app, StatusInputs inputs,
    const ctrl::ReconcileContext& ctx) {
  auto status = status_to_json(compute_status(inputs));
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const auto it = object.FindMember("status");
  const rapidjson::Value& current = it != object.MemberEnd() ? it->value : kEmpty;
  if (status_equal(current, status)) co_return std::nullopt;  // nothing changed: no write

  rapidjson::Document body(rapidjson::kObjectType);
  body.AddMember("status", rapidjson::Value(status, body.GetAllocator()), body.GetAllocator());
  auto path = kAppServices.in_namespace(app.namespace_).named(app.name).sub("status");
  auto result = co_await client_->patch(path, kube::PatchType::merge, kube::JsonBody(body));
  if (!result) {
    if (result.error().is(kube::Errc::not_found)) co_return std::nullopt;
    LOG(WARNING) << ctx.log_prefix << " status update failed: " << result.error().describe();
    co_return result.error();
  }
  VLOG(1) << ctx.log_prefix << " status updated";
  co_return std::nullopt;
}

}  // namespace appservice
