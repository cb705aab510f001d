// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the three files of AppServiceReconciler share: reconciler.cpp (the flow, status and
// Events), reconciler_children.cpp (the Deployment and Service), reconciler_deletion.cpp (the
// finalizer and the cleanup).

#include <glog/logging.h>
#include <rapidjson/document.h>

#include <chrono>
#include <memory>
#include <string>

#include "appservice/reconciler.h"
#include "ctrl/client.h"
#include "kube/core/resource_path.h"

namespace appservice {

inline const auto kAppServices = kube::ResourcePath::from_api_version(kApiVersion, "appservices");

// A child whose deletion ran into a newer version of it than the cache had: look again soon.
inline constexpr std::chrono::milliseconds kStaleRetry{1000};

// The reconcile's door to the caches and the API server (ctrl::Client).
inline ctrl::Client& client_of(const ctrl::ReconcileContext& ctx) {
  CHECK(ctx.client) << ctx.log_prefix << ": the controller gives every reconcile a ctrl::Client";
  return *ctx.client;
}

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

}  // namespace appservice
