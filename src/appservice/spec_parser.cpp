// SPDX-License-Identifier: Apache-2.0
#include "appservice/spec_parser.h"

#include <array>
#include <map>
#include <set>
#include <utility>

#include "appservice/quantity.h"

namespace appservice {
namespace {

using rapidjson::Value;

constexpr std::array kParsedFields = {
    FieldUse{"spec.size", JsonType::integer},
    FieldUse{"spec.image", JsonType::string},
    FieldUse{"spec.resources.limits.*", JsonType::int_or_string},
    FieldUse{"spec.resources.requests.*", JsonType::int_or_string},
    FieldUse{"spec.envs[].name", JsonType::string},
    FieldUse{"spec.envs[].value", JsonType::string},
    FieldUse{"spec.envs[].valueFrom.configMapKeyRef.name", JsonType::string},
    FieldUse{"spec.envs[].valueFrom.configMapKeyRef.key", JsonType::string},
    FieldUse{"spec.envs[].valueFrom.configMapKeyRef.optional", JsonType::boolean},
    FieldUse{"spec.envs[].valueFrom.secretKeyRef.name", JsonType::string},
    FieldUse{"spec.envs[].valueFrom.secretKeyRef.key", JsonType::string},
    FieldUse{"spec.envs[].valueFrom.secretKeyRef.optional", JsonType::boolean},
    FieldUse{"spec.envs[].valueFrom.fieldRef.apiVersion", JsonType::string},
    FieldUse{"spec.envs[].valueFrom.fieldRef.fieldPath", JsonType::string},
    FieldUse{"spec.envs[].valueFrom.resourceFieldRef.containerName", JsonType::string},
    FieldUse{"spec.envs[].valueFrom.resourceFieldRef.resource", JsonType::string},
    FieldUse{"spec.envs[].valueFrom.resourceFieldRef.divisor", JsonType::int_or_string},
    FieldUse{"spec.ports[].name", JsonType::string},
    FieldUse{"spec.ports[].protocol", JsonType::string},
    FieldUse{"spec.ports[].appProtocol", JsonType::string},
    FieldUse{"spec.ports[].port", JsonType::integer},
    FieldUse{"spec.ports[].targetPort", JsonType::int_or_string},
    FieldUse{"spec.ports[].nodePort", JsonType::integer},
    FieldUse{"spec.serviceType", JsonType::string},
};

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// RFC 1123 label: lower case alphanumerics and '-', alphanumeric at both ends.
bool is_dns_label(std::string_view s, std::size_t max) {
  if (s.empty() || s.size() > max || !is_lower_alnum(s.front()) || !is_lower_alnum(s.back()))
    return false;
  for (char c : s) {
    if (!is_lower_alnum(c) && c != '-') return false;
  }
  return true;
}

bool is_dns1035_label(std::string_view s) {
  return is_dns_label(s, 63) && s.front() >= 'a' && s.front() <= 'z';
}

// IANA_SVC_NAME, which a named containerPort must be: at most 15 characters, a letter, no "--".
bool is_iana_service_name(std::string_view s) {
  if (!is_dns_label(s, 15) || s.find("--") != std::string_view::npos) return false;
  for (char c : s) {
    if (c >= 'a' && c <= 'z') return true;
  }
  return false;
}

bool has_space(std::string_view s) {
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') return true;
  }
  return false;
}

// Reads typed fields, records a problem for each field of the wrong type or value.
class Reader {
 public:
  explicit Reader(std::vector<FieldProblem>& problems) : problems_(problems) {}

  void problem(std::string path, std::string message) {
    problems_.push_back({std::move(path), std::move(message)});
  }

  const Value* member(const Value& object, const char* name) const {
    auto it = object.FindMember(name);
    if (it == object.MemberEnd() || it->value.IsNull()) return nullptr;
    return &it->value;
  }

  const Value* object(const Value& parent, const char* name, const std::string& path) {
    const Value* v = member(parent, name);
    if (v && !v->IsObject()) {
      problem(path, "must be an object");
      return nullptr;
    }
    return v;
  }

  const Value* array(const Value& parent, const char* name, const std::string& path) {
    const Value* v = member(parent, name);
    if (v && !v->IsArray()) {
      problem(path, "must be a list");
      return nullptr;
    }
    return v;
  }

  std::optional<std::string> string(const Value& parent, const char* name,
                                    const std::string& path) {
    const Value* v = member(parent, name);
    if (!v) return std::nullopt;
    if (!v->IsString()) {
      problem(path, "must be a string");
      return std::nullopt;
    }
    return std::string(v->GetString(), v->GetStringLength());
  }

  std::optional<bool> boolean(const Value& parent, const char* name, const std::string& path) {
    const Value* v = member(parent, name);
    if (!v) return std::nullopt;
    if (!v->IsBool()) {
      problem(path, "must be true or false");
      return std::nullopt;
    }
    return v->GetBool();
  }

  std::optional<std::int64_t> integer(const Value& parent, const char* name,
                                      const std::string& path, std::int64_t min, std::int64_t max) {
    const Value* v = member(parent, name);
    if (!v) return std::nullopt;
    if (!v->IsInt64()) {
      problem(path, "must be an integer");
      return std::nullopt;
    }
    std::int64_t n = v->GetInt64();
    if (n < min || n > max) {
      problem(path, "must be in " + std::to_string(min) + ".." + std::to_string(max) + ", got " +
                        std::to_string(n));
      return std::nullopt;
    }
    return n;
  }

  // An int-or-string quantity, returned as text ("2", "500m").
  std::optional<std::string> quantity(const Value& v, const std::string& path) {
    if (v.IsInt64()) return std::to_string(v.GetInt64());
    if (v.IsString()) {
      std::string text(v.GetString(), v.GetStringLength());
      if (parse_quantity(text)) return text;
      problem(path, "must be a quantity such as 500m, 2 or 128Mi, got \"" + text + "\"");
      return std::nullopt;
    }
    problem(path, "must be a quantity (an integer or a string such as 500m)");
    return std::nullopt;
  }

 private:
  std::vector<FieldProblem>& problems_;
};

void parse_metadata(const Value& object, AppService& app, Reader& r) {
  const Value* meta = r.object(object, "metadata", "metadata");
  if (!meta) {
    r.problem("metadata", "is missing");
    return;
  }
  app.name = r.string(*meta, "name", "metadata.name").value_or("");
  app.namespace_ = r.string(*meta, "namespace", "metadata.namespace").value_or("");
  app.uid = r.string(*meta, "uid", "metadata.uid").value_or("");
  app.resource_version =
      r.string(*meta, "resourceVersion", "metadata.resourceVersion").value_or("");
  app.generation = r.integer(*meta, "generation", "metadata.generation", 0, INT64_MAX).value_or(0);
  app.being_deleted = r.member(*meta, "deletionTimestamp") != nullptr;
  if (const Value* finalizers = r.array(*meta, "finalizers", "metadata.finalizers")) {
    for (const Value& f : finalizers->GetArray()) {
      if (f.IsString()) app.finalizers.emplace_back(f.GetString(), f.GetStringLength());
    }
  }
  // The children take this name, and a Service name must be a DNS-1035 label.
  if (!is_dns1035_label(app.name)) {
    r.problem("metadata.name",
              "must be a DNS-1035 label (lower case letters, digits and '-', starting with a "
              "letter, at most 63 characters) because it also names the Service");
  }
}

void parse_resources(const Value& spec, Resources& resources, Reader& r) {
  const Value* res = r.object(spec, "resources", "spec.resources");
  if (!res) return;
  for (auto [field, target] :
       {std::pair{"limits", &resources.limits}, std::pair{"requests", &resources.requests}}) {
    std::string path = std::string("spec.resources.") + field;
    const Value* map = r.object(*res, field, path);
    if (!map) continue;
    for (const auto& m : map->GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      if (auto q = r.quantity(m.value, path + "." + key)) (*target)[key] = *q;
    }
  }
  // resources.claims is not in the schema: a container's claim names a Pod-level resourceClaims
  // entry, which an AppService has no way to declare, so the Pod could never be created.
}

std::optional<KeySelector> parse_key_selector(const Value& from, const char* field,
                                              const std::string& parent, Reader& r) {
  std::string path = parent + "." + field;
  const Value* v = r.object(from, field, path);
  if (!v) return std::nullopt;
  KeySelector s;
  s.name = r.string(*v, "name", path + ".name").value_or("");
  s.key = r.string(*v, "key", path + ".key").value_or("");
  s.optional = r.boolean(*v, "optional", path + ".optional");
  if (s.key.empty()) r.problem(path + ".key", "is required");
  return s;
}

std::optional<EnvVarSource> parse_env_source(const Value& env, const std::string& parent,
                                             Reader& r) {
  std::string path = parent + ".valueFrom";
  const Value* from = r.object(env, "valueFrom", path);
  if (!from) return std::nullopt;
  EnvVarSource source;
  source.config_map_key_ref = parse_key_selector(*from, "configMapKeyRef", path, r);
  source.secret_key_ref = parse_key_selector(*from, "secretKeyRef", path, r);
  if (const Value* f = r.object(*from, "fieldRef", path + ".fieldRef")) {
    ObjectFieldSelector s;
    s.api_version = r.string(*f, "apiVersion", path + ".fieldRef.apiVersion").value_or("");
    s.field_path = r.string(*f, "fieldPath", path + ".fieldRef.fieldPath").value_or("");
    if (s.field_path.empty()) r.problem(path + ".fieldRef.fieldPath", "is required");
    source.field_ref = std::move(s);
  }
  if (const Value* f = r.object(*from, "resourceFieldRef", path + ".resourceFieldRef")) {
    std::string p = path + ".resourceFieldRef";
    ResourceFieldSelector s;
    s.container_name = r.string(*f, "containerName", p + ".containerName").value_or("");
    s.resource = r.string(*f, "resource", p + ".resource").value_or("");
    if (s.resource.empty()) r.problem(p + ".resource", "is required");
    if (const Value* d = r.member(*f, "divisor"))
      s.divisor = r.quantity(*d, p + ".divisor").value_or("");
    source.resource_field_ref = std::move(s);
  }
  int set = source.config_map_key_ref.has_value() + source.secret_key_ref.has_value() +
            source.field_ref.has_value() + source.resource_field_ref.has_value();
  if (set != 1) {
    r.problem(path,
              "must set exactly one of configMapKeyRef, secretKeyRef, fieldRef, resourceFieldRef");
  }
  return source;
}

void parse_envs(const Value& spec, std::vector<EnvVar>& envs, Reader& r) {
  const Value* list = r.array(spec, "envs", "spec.envs");
  if (!list) return;
  std::set<std::string> names;
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    std::string path = "spec.envs[" + std::to_string(i) + "]";
    const Value& e = (*list)[i];
    if (!e.IsObject()) {
      r.problem(path, "must be an object");
      continue;
    }
    EnvVar env;
    env.name = r.string(e, "name", path + ".name").value_or("");
    env.value = r.string(e, "value", path + ".value").value_or("");
    env.value_from = parse_env_source(e, path, r);
    if (env.name.empty() || env.name.find('=') != std::string::npos) {
      r.problem(path + ".name", "is required and must not contain '='");
    } else if (!names.insert(env.name).second) {
      r.problem(path + ".name", "duplicate name \"" + env.name + "\"");
    }
    if (!env.value.empty() && env.value_from) {
      r.problem(path, "value and valueFrom are mutually exclusive");
    }
    envs.push_back(std::move(env));
  }
}

void parse_ports(const Value& spec, std::vector<ServicePort>& ports, Reader& r) {
  const Value* list = r.array(spec, "ports", "spec.ports");
  if (!list) return;
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    std::string path = "spec.ports[" + std::to_string(i) + "]";
    const Value& p = (*list)[i];
    if (!p.IsObject()) {
      r.problem(path, "must be an object");
      continue;
    }
    ServicePort port;
    port.name = r.string(p, "name", path + ".name").value_or("");
    if (!port.name.empty() && !is_dns_label(port.name, 63)) {
      r.problem(path + ".name", "must be a DNS label (lower case letters, digits and '-')");
    }
    if (auto text = r.string(p, "protocol", path + ".protocol")) {
      if (auto protocol = protocol_from_string(*text)) {
        port.protocol = *protocol;
      } else {
        r.problem(path + ".protocol", "must be TCP, UDP or SCTP, got \"" + *text + "\"");
      }
    }
    port.app_protocol = r.string(p, "appProtocol", path + ".appProtocol").value_or("");
    if (auto n = r.integer(p, "port", path + ".port", 1, 65535)) {
      port.port = static_cast<std::int32_t>(*n);
    } else if (!r.member(p, "port")) {
      r.problem(path + ".port", "is required");
    }
    if (const Value* t = r.member(p, "targetPort")) {
      if (t->IsInt64()) {
        if (t->GetInt64() < 1 || t->GetInt64() > 65535) {
          r.problem(path + ".targetPort",
                    "must be in 1..65535, got " + std::to_string(t->GetInt64()));
        } else {
          port.target_port = static_cast<std::int32_t>(t->GetInt64());
        }
      } else if (t->IsString()) {
        std::string name(t->GetString(), t->GetStringLength());
        if (is_iana_service_name(name)) {
          port.target_port = std::move(name);
        } else {
          r.problem(path + ".targetPort",
                    "must be a port number or an IANA service name (at most 15 lower case "
                    "letters, digits and single '-', with a letter), got \"" +
                        name + "\"");
        }
      } else {
        r.problem(path + ".targetPort", "must be a port number or a name");
      }
    }
    // The node port range is the cluster's (--service-node-port-range): the API server judges it.
    if (auto n = r.integer(p, "nodePort", path + ".nodePort", 1, 65535)) {
      port.node_port = static_cast<std::int32_t>(*n);
    }
    ports.push_back(std::move(port));
  }

  // The Service's own rules, which the CRD has as CEL.
  std::set<std::pair<std::int32_t, Protocol>> keys;
  std::set<std::string> names;
  std::set<std::pair<std::int32_t, Protocol>> node_ports;
  std::map<std::string, Protocol> target_names;  // a container port has one name and one protocol
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const ServicePort& p = ports[i];
    std::string path = "spec.ports[" + std::to_string(i) + "]";
    if (p.port != 0 && !keys.insert({p.port, p.protocol}).second) {
      r.problem(path, "duplicate port " + std::to_string(p.port) + "/" +
                          std::string(to_string(p.protocol)));
    }
    if (ports.size() > 1 && p.name.empty()) {
      r.problem(path + ".name", "is required when there is more than one port");
    } else if (!p.name.empty() && !names.insert(p.name).second) {
      r.problem(path + ".name", "duplicate name \"" + p.name + "\"");
    }
    if (p.node_port && !node_ports.insert({*p.node_port, p.protocol}).second) {
      r.problem(path + ".nodePort", "duplicate nodePort " + std::to_string(*p.node_port));
    }
    const IntOrString target = p.effective_target_port();
    if (const auto* name = std::get_if<std::string>(&target)) {
      auto [it, added] = target_names.emplace(*name, p.protocol);
      if (!added && it->second != p.protocol) {
        r.problem(path + ".targetPort",
                  "the named target port \"" + *name + "\" is already used with another protocol");
      }
    }
  }
}

}  // namespace

std::string_view to_string(JsonType type) {
  switch (type) {
    case JsonType::string:
      return "string";
    case JsonType::integer:
      return "integer";
    case JsonType::boolean:
      return "boolean";
    case JsonType::int_or_string:
      return "int-or-string";
  }
  return "string";
}

std::span<const FieldUse> parsed_fields() {
  return kParsedFields;
}

std::string ParsedAppService::problems_message() const {
  constexpr std::size_t kMax = 1024;  // Event messages and conditions stay readable
  std::string out;
  for (const FieldProblem& p : problems) {
    std::string item = p.path + ": " + p.message;
    if (!out.empty()) item = "; " + item;
    if (out.size() + item.size() > kMax) {
      out += "; ...";
      break;
    }
    out += item;
  }
  return out;
}

ParsedAppService parse_app_service(const rapidjson::Value& object) {
  ParsedAppService result;
  Reader r(result.problems);
  if (!object.IsObject()) {
    r.problem("", "the object is not a JSON object");
    return result;
  }
  AppService& app = result.app;
  parse_metadata(object, app, r);

  const Value* spec = r.object(object, "spec", "spec");
  if (!spec) {
    if (!r.member(object, "spec")) r.problem("spec", "is required");
    return result;
  }
  AppServiceSpec& s = app.spec;
  if (auto size = r.integer(*spec, "size", "spec.size", 0, INT32_MAX)) {
    s.size = static_cast<std::int32_t>(*size);
  }
  if (auto image = r.string(*spec, "image", "spec.image")) {
    s.image = *image;
    if (s.image.empty()) r.problem("spec.image", "must not be empty");
    if (has_space(s.image)) r.problem("spec.image", "must not contain white space");
  } else if (!r.member(*spec, "image")) {
    r.problem("spec.image", "is required");
  }
  parse_resources(*spec, s.resources, r);
  parse_envs(*spec, s.envs, r);
  parse_ports(*spec, s.ports, r);

  bool any_node_port = false;
  for (const ServicePort& p : s.ports) any_node_port = any_node_port || p.node_port.has_value();
  if (auto text = r.string(*spec, "serviceType", "spec.serviceType")) {
    if (auto type = service_type_from_string(*text)) {
      s.service_type = *type;
      if (*type == ServiceType::cluster_ip && any_node_port) {
        r.problem("spec.serviceType",
                  "is ClusterIP, but spec.ports[].nodePort may only be set when it is NodePort "
                  "or LoadBalancer (or unset)");
      }
      if (*type != ServiceType::cluster_ip && s.ports.empty()) {
        r.problem("spec.ports", "must list at least one port when spec.serviceType is " + *text);
      }
    } else {
      r.problem("spec.serviceType",
                "must be ClusterIP, NodePort or LoadBalancer, got \"" + *text + "\"");
    }
  } else {
    s.service_type = any_node_port ? ServiceType::node_port : ServiceType::cluster_ip;
  }
  return result;
}

}  // namespace appservice
