// SPDX-License-Identifier: Apache-2.0
#include "appservice/desired_state.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <cstdio>
#include <set>
#include <utility>

#include "ctrl/object/owner_reference.h"

namespace appservice {
namespace {

using rapidjson::Document;
using rapidjson::Value;
using Allocator = Document::AllocatorType;

Value str(std::string_view s, Allocator& a) {
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

void add(Value& object, std::string_view key, Value value, Allocator& a) {
  object.AddMember(str(key, a), std::move(value), a);
}

void add(Value& object, std::string_view key, std::string_view value, Allocator& a) {
  add(object, key, str(value, a), a);
}

Value labels(const AppService& app, Allocator& a) {
  Value v(rapidjson::kObjectType);
  add(v, kNameLabel, app.name, a);
  add(v, kInstanceLabel, app.name, a);
  add(v, kManagedByLabel, kManagedBy, a);
  add(v, kSelectorLabel, app.name, a);
  return v;
}

// Only our own label: a Deployment's selector is immutable, so it must never change.
Value selector_labels(const AppService& app, Allocator& a) {
  Value v(rapidjson::kObjectType);
  add(v, kSelectorLabel, app.name, a);
  return v;
}

Value metadata(const AppService& app, Allocator& a) {
  Value meta(rapidjson::kObjectType);
  add(meta, "name", app.name, a);
  add(meta, "namespace", app.namespace_, a);
  add(meta, "labels", labels(app, a), a);
  return meta;
}

// Our metadata, controlled by the AppService (the garbage collector deletes the child with it).
void add_metadata(Document& doc, const AppService& app) {
  auto& a = doc.GetAllocator();
  add(doc, "metadata", metadata(app, a), a);
  const ctrl::OwnerRef owner{std::string(kApiVersion), std::string(kKind), app.name, app.uid};
  ctrl::set_controller_reference(doc, owner, a);
}

Value key_selector(const KeySelector& s, Allocator& a) {
  Value v(rapidjson::kObjectType);
  if (!s.name.empty()) add(v, "name", s.name, a);
  add(v, "key", s.key, a);
  if (s.optional) add(v, "optional", Value(*s.optional), a);
  return v;
}

Value env_source(const EnvVarSource& source, Allocator& a) {
  Value v(rapidjson::kObjectType);
  if (source.config_map_key_ref) {
    add(v, "configMapKeyRef", key_selector(*source.config_map_key_ref, a), a);
  }
  if (source.secret_key_ref) add(v, "secretKeyRef", key_selector(*source.secret_key_ref, a), a);
  if (source.field_ref) {
    Value f(rapidjson::kObjectType);
    if (!source.field_ref->api_version.empty())
      add(f, "apiVersion", source.field_ref->api_version, a);
    add(f, "fieldPath", source.field_ref->field_path, a);
    add(v, "fieldRef", std::move(f), a);
  }
  if (source.resource_field_ref) {
    const ResourceFieldSelector& r = *source.resource_field_ref;
    Value f(rapidjson::kObjectType);
    if (!r.container_name.empty()) add(f, "containerName", r.container_name, a);
    add(f, "resource", r.resource, a);
    if (!r.divisor.empty()) add(f, "divisor", r.divisor, a);
    add(v, "resourceFieldRef", std::move(f), a);
  }
  return v;
}

Value resources(const Resources& res, Allocator& a) {
  Value v(rapidjson::kObjectType);
  for (auto [field, map] :
       {std::pair{"limits", &res.limits}, std::pair{"requests", &res.requests}}) {
    if (map->empty()) continue;
    Value m(rapidjson::kObjectType);
    for (const auto& [name, quantity] : *map) add(m, name, quantity, a);
    add(v, field, std::move(m), a);
  }
  return v;
}

// One containerPort per distinct (targetPort, protocol). A named targetPort names a containerPort
// with the Service port's number, so the Service can resolve it.
Value container_ports(const AppService& app, Allocator& a) {
  Value ports(rapidjson::kArrayType);
  std::set<std::pair<std::int32_t, Protocol>> numbers;
  std::set<std::string> names;
  for (const ServicePort& p : app.spec.ports) {
    IntOrString target = p.effective_target_port();
    const std::string* name = std::get_if<std::string>(&target);
    std::int32_t number = name ? p.port : std::get<std::int32_t>(target);
    if (!numbers.insert({number, p.protocol}).second) continue;
    if (name && !names.insert(*name).second) continue;
    Value port(rapidjson::kObjectType);
    if (name) add(port, "name", *name, a);
    add(port, "containerPort", Value(number), a);
    add(port, "protocol", to_string(p.protocol), a);
    ports.PushBack(std::move(port), a);
  }
  return ports;
}

Value container(const AppService& app, Allocator& a) {
  Value c(rapidjson::kObjectType);
  add(c, "name", kContainerName, a);
  add(c, "image", app.spec.image, a);
  if (!app.spec.resources.empty()) add(c, "resources", resources(app.spec.resources, a), a);
  if (!app.spec.envs.empty()) {
    Value env(rapidjson::kArrayType);
    for (const EnvVar& e : app.spec.envs) {
      Value v(rapidjson::kObjectType);
      add(v, "name", e.name, a);
      // The API server omits an empty value; sending none keeps the comparison exact.
      if (!e.value.empty()) add(v, "value", e.value, a);
      if (e.value_from) add(v, "valueFrom", env_source(*e.value_from, a), a);
      env.PushBack(std::move(v), a);
    }
    add(c, "env", std::move(env), a);
  }
  if (!app.spec.ports.empty()) add(c, "ports", container_ports(app, a), a);
  return c;
}

// FNV-1a over the compact JSON: stable across runs and builds (std::hash is not).
std::string body_hash(const Document& doc) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  doc.Accept(writer);
  std::uint64_t h = 14695981039346656037ull;
  for (std::size_t i = 0; i < buffer.GetSize(); ++i) {
    h ^= static_cast<unsigned char>(buffer.GetString()[i]);
    h *= 1099511628211ull;
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

void add_spec_hash(Document& doc) {
  std::string hash = body_hash(doc);
  auto& a = doc.GetAllocator();
  Value annotations(rapidjson::kObjectType);
  add(annotations, kSpecHashAnnotation, hash, a);
  add(doc["metadata"], "annotations", std::move(annotations), a);
}

}  // namespace

Document desired_deployment(const AppService& app) {
  Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  add(doc, "apiVersion", "apps/v1", a);
  add(doc, "kind", "Deployment", a);
  add_metadata(doc, app);

  Value selector(rapidjson::kObjectType);
  add(selector, "matchLabels", selector_labels(app, a), a);
  Value template_meta(rapidjson::kObjectType);
  add(template_meta, "labels", labels(app, a), a);
  Value containers(rapidjson::kArrayType);
  containers.PushBack(container(app, a), a);
  Value pod_spec(rapidjson::kObjectType);
  add(pod_spec, "containers", std::move(containers), a);
  Value pod_template(rapidjson::kObjectType);
  add(pod_template, "metadata", std::move(template_meta), a);
  add(pod_template, "spec", std::move(pod_spec), a);

  Value spec(rapidjson::kObjectType);
  add(spec, "replicas", Value(app.spec.size), a);
  add(spec, "selector", std::move(selector), a);
  add(spec, "template", std::move(pod_template), a);
  add(doc, "spec", std::move(spec), a);
  add_spec_hash(doc);
  return doc;
}

Document desired_service(const AppService& app) {
  Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  add(doc, "apiVersion", "v1", a);
  add(doc, "kind", "Service", a);
  add_metadata(doc, app);

  Value ports(rapidjson::kArrayType);
  for (const ServicePort& p : app.spec.ports) {
    Value port(rapidjson::kObjectType);
    if (!p.name.empty()) add(port, "name", p.name, a);
    add(port, "protocol", to_string(p.protocol), a);
    if (!p.app_protocol.empty()) add(port, "appProtocol", p.app_protocol, a);
    add(port, "port", Value(p.port), a);
    IntOrString target = p.effective_target_port();
    if (const auto* name = std::get_if<std::string>(&target)) {
      add(port, "targetPort", *name, a);
    } else {
      add(port, "targetPort", Value(std::get<std::int32_t>(target)), a);
    }
    if (p.node_port) add(port, "nodePort", Value(*p.node_port), a);
    ports.PushBack(std::move(port), a);
  }
  Value spec(rapidjson::kObjectType);
  add(spec, "type", to_string(app.spec.service_type), a);
  add(spec, "selector", selector_labels(app, a), a);
  add(spec, "ports", std::move(ports), a);
  add(doc, "spec", std::move(spec), a);
  add_spec_hash(doc);
  return doc;
}

bool needs_service(const AppService& app) {
  return !app.spec.ports.empty();
}

std::string label_selector(const AppService& app) {
  return std::string(kSelectorLabel) + "=" + app.name;
}

}  // namespace appservice
