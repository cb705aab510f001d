// SPDX-License-Identifier: Apache-2.0
#include "appservice/app_service.h"

#include <algorithm>

namespace appservice {

std::string_view to_string(Protocol protocol) {
  switch (protocol) {
    case Protocol::tcp:
      return "TCP";
    case Protocol::udp:
      return "UDP";
    case Protocol::sctp:
      return "SCTP";
  }
  return "TCP";
}

std::string_view to_string(ServiceType type) {
  switch (type) {
    case ServiceType::cluster_ip:
      return "ClusterIP";
    case ServiceType::node_port:
      return "NodePort";
    case ServiceType::load_balancer:
      return "LoadBalancer";
  }
  return "ClusterIP";
}

std::optional<Protocol> protocol_from_string(std::string_view text) {
  for (Protocol p : {Protocol::tcp, Protocol::udp, Protocol::sctp}) {
    if (to_string(p) == text) return p;
  }
  return std::nullopt;
}

std::optional<ServiceType> service_type_from_string(std::string_view text) {
  for (ServiceType t :
       {ServiceType::cluster_ip, ServiceType::node_port, ServiceType::load_balancer}) {
    if (to_string(t) == text) return t;
  }
  return std::nullopt;
}

IntOrString ServicePort::effective_target_port() const {
  return target_port.value_or(port);
}

const Condition* AppServiceStatus::find_condition(std::string_view type) const {
  auto it = std::find_if(conditions.begin(), conditions.end(),
                         [&](const Condition& c) { return c.type == type; });
  return it == conditions.end() ? nullptr : &*it;
}

bool AppService::has_finalizer(std::string_view finalizer) const {
  return std::find(finalizers.begin(), finalizers.end(), finalizer) != finalizers.end();
}

}  // namespace appservice
