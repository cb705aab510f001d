// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ctrl/object/condition.h"

namespace appservice {

// The AppService API (app.example.com/v1) as typed C++; the schema is crds/. Fields hold values
// with the CRD's defaults applied, so code below the parser never re-derives a default.

enum class Protocol { tcp, udp, sctp };
enum class ServiceType { cluster_ip, node_port, load_balancer };

std::string_view to_string(Protocol protocol);
std::string_view to_string(ServiceType type);
std::optional<Protocol> protocol_from_string(std::string_view text);
std::optional<ServiceType> service_type_from_string(std::string_view text);

// core/v1 IntOrString: a port number or an IANA service name.
using IntOrString = std::variant<std::int32_t, std::string>;

struct ServicePort {
  std::string name;  // empty when unset
  Protocol protocol = Protocol::tcp;
  std::string app_protocol;  // empty when unset
  std::int32_t port = 0;
  std::optional<IntOrString> target_port;  // unset means "same as port"
  std::optional<std::int32_t> node_port;

  // The targetPort the Service really uses: the given one, else the port number.
  IntOrString effective_target_port() const;
};

struct KeySelector {  // ConfigMapKeySelector and SecretKeySelector have the same shape
  std::string name;
  std::string key;
  std::optional<bool> optional;
};

struct ObjectFieldSelector {
  std::string api_version;  // empty when unset (the API server defaults it to v1)
  std::string field_path;
};

struct ResourceFieldSelector {
  std::string container_name;
  std::string resource;
  std::string divisor;  // a quantity; empty when unset
};

struct EnvVarSource {
  std::optional<KeySelector> config_map_key_ref;
  std::optional<KeySelector> secret_key_ref;
  std::optional<ObjectFieldSelector> field_ref;
  std::optional<ResourceFieldSelector> resource_field_ref;
};

struct EnvVar {
  std::string name;
  std::string value;  // empty when unset
  std::optional<EnvVarSource> value_from;
};

// core/v1 ResourceRequirements; quantities are kept as the user wrote them (integers as decimal
// strings), the API server canonicalises them in the Deployment.
struct Resources {
  std::map<std::string, std::string> limits;
  std::map<std::string, std::string> requests;

  bool empty() const { return limits.empty() && requests.empty(); }
};

struct AppServiceSpec {
  std::int32_t size = 1;
  std::string image;
  Resources resources;
  std::vector<EnvVar> envs;
  std::vector<ServicePort> ports;
  // spec.serviceType when set, else derived: NodePort if any port sets nodePort, else ClusterIP.
  ServiceType service_type = ServiceType::cluster_ip;
};

// One metav1.Condition (the runtime's, with apimachinery's semantics: ctrl/object/condition.h).
using Condition = ctrl::Condition;

struct AppServiceStatus {
  std::int64_t observed_generation = 0;
  std::int32_t replicas = 0;
  std::int32_t ready_replicas = 0;
  std::int32_t available_replicas = 0;
  std::string selector;
  std::vector<Condition> conditions;

  const Condition* find_condition(std::string_view type) const;
};

struct AppService {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  std::int64_t generation = 0;
  bool being_deleted = false;  // metadata.deletionTimestamp is set
  std::vector<std::string> finalizers;
  AppServiceSpec spec;

  bool has_finalizer(std::string_view finalizer) const;
};

inline constexpr std::string_view kApiVersion = "app.example.com/v1";
inline constexpr std::string_view kKind = "AppService";

}  // namespace appservice
