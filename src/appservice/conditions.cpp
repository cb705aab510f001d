// SPDX-License-Identifier: Apache-2.0
#include "appservice/conditions.h"

#include <algorithm>
#include <utility>

#include "appservice/desired_state.h"
#include "kube/core/json_access.h"

namespace appservice {
namespace {

using rapidjson::Value;

using kube::json::member;

std::int64_t integer(const Value* object, const char* name) {
  return kube::json::integer(member(object, name));
}

std::string text(const Value* object, const char* name) {
  return kube::json::text(member(object, name));
}

// The Deployment's condition of a type, or null.
const Value* deployment_condition(const Value* deployment, std::string_view type) {
  const Value* list = member(member(deployment, "status"), "conditions");
  if (!list || !list->IsArray()) return nullptr;
  for (const Value& c : list->GetArray()) {
    if (text(&c, "type") == type) return &c;
  }
  return nullptr;
}

Condition make(std::string_view type, bool status, std::string reason, std::string message) {
  Condition c;
  c.type = type;
  c.status = status ? "True" : "False";
  c.reason = std::move(reason);
  c.message = std::move(message);
  return c;
}

std::string replicas_message(std::int64_t available, std::int32_t size) {
  return std::to_string(available) + " of " + std::to_string(size) + " replicas available";
}

Condition not_owned(std::string_view type, const std::string& kind, const std::string& name) {
  return make(type, false, kind + "NotOwned",
              kind + " " + name + " exists and is not controlled by this AppService");
}

Condition available(const StatusInputs& in, const AppServiceStatus& s) {
  const AppService& app = in.app;
  if (!in.deployment) {
    if (in.deployment_foreign) return not_owned(kAvailable, "Deployment", app.name);
    return make(kAvailable, false, "DeploymentNotFound",
                "Deployment " + app.name + " does not exist yet");
  }
  if (needs_service(app) && !in.service) {
    if (in.service_foreign) return not_owned(kAvailable, "Service", app.name);
    return make(kAvailable, false, "ServiceNotFound",
                "Service " + app.name + " does not exist yet");
  }
  if (app.spec.size == 0) {
    return make(kAvailable, true, "ScaledToZero", "size is 0: no replicas are wanted");
  }
  const Value* dep_available = deployment_condition(in.deployment, "Available");
  bool ok = dep_available && text(dep_available, "status") == "True" &&
            s.available_replicas >= app.spec.size;
  return make(kAvailable, ok, ok ? "MinimumReplicasAvailable" : "DeploymentUnavailable",
              replicas_message(s.available_replicas, app.spec.size));
}

Condition progressing(const StatusInputs& in, const AppServiceStatus& s) {
  const AppService& app = in.app;
  if (!in.deployment) {
    if (in.deployment_foreign) return not_owned(kProgressing, "Deployment", app.name);
    return make(kProgressing, true, "DeploymentCreating",
                "waiting for Deployment " + app.name + " to be created");
  }
  if (in.deployment_write_failed) {
    // What runs is a rollout of an older spec: this generation is not progressing, whatever the
    // Deployment says of its own.
    return make(kProgressing, false, in.issue_reason.empty() ? "ReconcileError" : in.issue_reason,
                "Deployment " + app.name + " does not carry the spec: " + in.issue_message);
  }
  const Value* dep_progressing = deployment_condition(in.deployment, "Progressing");
  if (dep_progressing && text(dep_progressing, "status") == "False") {
    std::string reason = text(dep_progressing, "reason");
    return make(kProgressing, false, reason.empty() ? "DeploymentStalled" : reason,
                text(dep_progressing, "message"));
  }
  const Value* status = member(in.deployment, "status");
  const Value* meta = member(in.deployment, "metadata");
  bool observed = integer(status, "observedGeneration") >= integer(meta, "generation");
  std::int64_t updated = integer(status, "updatedReplicas");
  bool done = observed && updated == app.spec.size && s.replicas == app.spec.size &&
              s.available_replicas == app.spec.size;
  if (done) {
    return make(kProgressing, false, "RolloutComplete",
                "Deployment " + app.name + " has " + std::to_string(app.spec.size) +
                    " updated, available replicas");
  }
  return make(kProgressing, true, "RollingOut",
              std::to_string(updated) + " of " + std::to_string(app.spec.size) +
                  " replicas updated, " + replicas_message(s.available_replicas, app.spec.size));
}

// Degraded says why the children cannot reach the spec: our own failure first (a spec we cannot
// build, a name someone else holds, a write the API server refused), then the Deployment's own
// account of its Pods (refused by a quota, Pod Security or a policy: ReplicaFailure; a rollout
// past its deadline).
Condition degraded(const StatusInputs& in) {
  switch (in.issue) {
    case ReconcileIssue::none:
      break;
    case ReconcileIssue::invalid_spec:
      return make(kDegraded, true, "InvalidSpec", in.issue_message);
    case ReconcileIssue::ownership_conflict:
      return make(kDegraded, true, "OwnershipConflict", in.issue_message);
    case ReconcileIssue::reconcile_error:
      return make(kDegraded, true, in.issue_reason.empty() ? "ReconcileError" : in.issue_reason,
                  in.issue_message);
  }
  const std::string deployment = "Deployment " + in.app.name;
  const Value* failure = deployment_condition(in.deployment, "ReplicaFailure");
  if (failure && text(failure, "status") == "True") {
    std::string why = text(failure, "reason");
    return make(kDegraded, true, std::string(kReplicaFailure),
                deployment + " cannot create its Pods" + (why.empty() ? "" : " (" + why + ")") +
                    ": " + text(failure, "message"));
  }
  const Value* progress = deployment_condition(in.deployment, "Progressing");
  if (progress && text(progress, "status") == "False" &&
      text(progress, "reason") == "ProgressDeadlineExceeded") {
    return make(kDegraded, true, "ProgressDeadlineExceeded",
                deployment + ": " + text(progress, "message"));
  }
  return make(kDegraded, false, "AsExpected", "The owned children match the spec");
}

// metav1.Condition semantics: the transition time moves only when the status flips.
void stamp(Condition& c, const StatusInputs& in) {
  c.observed_generation = in.app.generation;
  c = ctrl::transitioned(std::move(c), in.previous, in.now);
}

Value str(std::string_view s, rapidjson::Document::AllocatorType& a) {
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

bool is_count(std::string_view key) {
  return key == "replicas" || key == "readyReplicas" || key == "availableReplicas" ||
         key == "observedGeneration";
}

bool json_equal(const Value& a, const Value& b);

// Conditions are a map keyed by type: order does not matter.
bool conditions_equal(const Value& a, const Value& b) {
  if (!a.IsArray() || !b.IsArray() || a.Size() != b.Size()) return json_equal(a, b);
  for (const Value& x : a.GetArray()) {
    std::string type = text(&x, "type");
    auto match =
        std::find_if(b.Begin(), b.End(), [&](const Value& y) { return text(&y, "type") == type; });
    if (match == b.End() || !json_equal(x, *match)) return false;
  }
  return true;
}

bool objects_equal(const Value& a, const Value& b, bool status_level) {
  auto missing_ok = [&](const auto& m) {
    std::string_view key(m.name.GetString(), m.name.GetStringLength());
    return status_level && is_count(key) && m.value.IsInt64() && m.value.GetInt64() == 0;
  };
  for (const auto& m : a.GetObject()) {
    auto it = b.FindMember(m.name);
    if (it == b.MemberEnd()) {
      if (!missing_ok(m)) return false;
      continue;
    }
    std::string_view key(m.name.GetString(), m.name.GetStringLength());
    bool same = status_level && key == "conditions" ? conditions_equal(m.value, it->value)
                                                    : json_equal(m.value, it->value);
    if (!same) return false;
  }
  for (const auto& m : b.GetObject()) {
    if (!a.HasMember(m.name) && !missing_ok(m)) return false;
  }
  return true;
}

bool json_equal(const Value& a, const Value& b) {
  if (a.IsObject() && b.IsObject()) return objects_equal(a, b, false);
  return a == b;  // RapidJSON compares arrays element-wise and objects as unordered maps
}

// A short scalar as the log shows it; objects, lists and messages are not shown.
std::string shown(const Value* v) {
  if (!v) return "(none)";
  if (v->IsString()) {
    if (v->GetStringLength() > 64) return "(text)";
    return "\"" + std::string(v->GetString(), v->GetStringLength()) + "\"";
  }
  if (v->IsInt64()) return std::to_string(v->GetInt64());
  if (v->IsBool()) return v->GetBool() ? "true" : "false";
  if (v->IsNull()) return "null";
  return "(value)";
}

// The first member of `to` that `from` lacks or holds otherwise (or that `from` has and `to` has
// not), under `path`.
std::string first_difference(const Value& from, const Value& to, const std::string& path,
                             bool status_level) {
  auto line = [&](const std::string& key, const Value* a, const Value* b) {
    const std::string where = path + key;
    if (key == "message" || key == "lastTransitionTime") return where;
    return where + " " + shown(a) + " -> " + shown(b);
  };
  auto missing_ok = [&](std::string_view key, const Value& v) {
    return status_level && is_count(key) && v.IsInt64() && v.GetInt64() == 0;
  };
  for (const auto& m : to.GetObject()) {
    const std::string key(m.name.GetString(), m.name.GetStringLength());
    auto it = from.FindMember(m.name);
    if (it == from.MemberEnd()) {
      if (missing_ok(key, m.value)) continue;
      return line(key, nullptr, &m.value);
    }
    if (status_level && key == "conditions" && it->value.IsArray() && m.value.IsArray()) {
      if (conditions_equal(it->value, m.value)) continue;
      for (const Value& c : m.value.GetArray()) {
        const std::string type = text(&c, "type");
        auto old = std::find_if(it->value.Begin(), it->value.End(),
                                [&](const Value& y) { return text(&y, "type") == type; });
        if (old == it->value.End()) return "conditions[" + type + "] (new)";
        if (!json_equal(*old, c) && old->IsObject() && c.IsObject()) {
          return first_difference(*old, c, "conditions[" + type + "].", false);
        }
      }
      return "conditions (a condition went)";
    }
    if (!json_equal(it->value, m.value)) return line(key, &it->value, &m.value);
  }
  for (const auto& m : from.GetObject()) {
    const std::string key(m.name.GetString(), m.name.GetStringLength());
    if (!to.HasMember(m.name) && !missing_ok(key, m.value)) return line(key, &m.value, nullptr);
  }
  return {};
}

}  // namespace

AppServiceStatus compute_status(const StatusInputs& in) {
  AppServiceStatus s;
  s.observed_generation = in.app.generation;
  s.selector = label_selector(in.app);
  const Value* dep_status = member(in.deployment, "status");
  s.replicas = static_cast<std::int32_t>(integer(dep_status, "replicas"));
  s.ready_replicas = static_cast<std::int32_t>(integer(dep_status, "readyReplicas"));
  s.available_replicas = static_cast<std::int32_t>(integer(dep_status, "availableReplicas"));
  s.conditions = {available(in, s), progressing(in, s), degraded(in)};
  for (Condition& c : s.conditions) stamp(c, in);
  return s;
}

std::vector<Condition> parse_conditions(const rapidjson::Value& object) {
  return ctrl::conditions_from_json(member(member(&object, "status"), "conditions"));
}

rapidjson::Document status_to_json(const AppServiceStatus& status) {
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  doc.AddMember("observedGeneration", Value(status.observed_generation), a);
  doc.AddMember("replicas", Value(status.replicas), a);
  doc.AddMember("readyReplicas", Value(status.ready_replicas), a);
  doc.AddMember("availableReplicas", Value(status.available_replicas), a);
  doc.AddMember("selector", str(status.selector, a), a);
  Value conditions(rapidjson::kArrayType);
  for (const Condition& c : status.conditions)
    conditions.PushBack(ctrl::condition_to_json(c, a), a);
  doc.AddMember("conditions", std::move(conditions), a);
  return doc;
}

bool status_equal(const rapidjson::Value& a, const rapidjson::Value& b) {
  if (!a.IsObject() || !b.IsObject()) return a == b;
  return objects_equal(a, b, true);
}

std::string status_difference(const rapidjson::Value& from, const rapidjson::Value& to) {
  if (!from.IsObject() || !to.IsObject()) return "the whole status";
  return first_difference(from, to, "", true);
}

}  // namespace appservice
