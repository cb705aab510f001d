// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "appservice/app_service.h"

namespace appservice {

// Pure builders of the children's server-side apply bodies. They hold only the fields this
// operator owns, with defaults set explicitly (protocol TCP, targetPort = port) so that applying
// the same body again changes nothing.

inline constexpr std::string_view kManagedBy = "appservice-operator";
inline constexpr std::string_view kNameLabel = "app.kubernetes.io/name";
inline constexpr std::string_view kInstanceLabel = "app.kubernetes.io/instance";
inline constexpr std::string_view kManagedByLabel = "app.kubernetes.io/managed-by";
// The selector of the Deployment and the Service: a label no other tool sets (Helm and kubectl
// users set app.kubernetes.io/instance too, so selecting on it could pick up their Pods).
inline constexpr std::string_view kSelectorLabel = "app.example.com/appservice";
inline constexpr std::string_view kContainerName = "app";
// A hash of the rest of the body. Comparing desired fields with the live object cannot see a
// field we stopped sending (an env var removed from the spec): the hash changes, so it can.
inline constexpr std::string_view kSpecHashAnnotation = "app.example.com/spec-hash";

// apps/v1 Deployment named after the AppService, one container "app".
rapidjson::Document desired_deployment(const AppService& app);

// core/v1 Service named after the AppService. Only meaningful when needs_service(app).
rapidjson::Document desired_service(const AppService& app);

// A Service needs at least one port; an AppService without ports gets no Service.
bool needs_service(const AppService& app);

// status.selector for the scale subresource, e.g. "app.example.com/appservice=nginx-app".
std::string label_selector(const AppService& app);

}  // namespace appservice
