// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <utility>

#include "kube/core/resource_path.h"

namespace ctrl {

// A kind of object the way a controller names it: what an Event's involvedObject and an
// ownerReference say (apiVersion, kind) and where the API serves it (resource, scope), e.g.
// {"apps/v1", "Deployment", "deployments"}. What controller-runtime learns from a Go type and a
// RESTMapper is spelled out here.
struct Kind {
  enum class Scope { namespaced, cluster };

  Kind() = default;  // not an aggregate: GCC 12 co_await temporaries (kube/list_options.h)
  Kind(std::string api_version_, std::string kind_, std::string resource_,
       Scope scope_ = Scope::namespaced)
      : api_version(std::move(api_version_)),
        kind(std::move(kind_)),
        resource(std::move(resource_)),
        scope(scope_) {}

  std::string api_version;  // "apps/v1", "v1"
  std::string kind;         // "Deployment"
  std::string resource;     // "deployments"
  Scope scope = Scope::namespaced;

  // "apps", "" for the core group.
  std::string group() const {
    const auto slash = api_version.find('/');
    return slash == std::string::npos ? std::string() : api_version.substr(0, slash);
  }
  // The collection in every namespace (or the cluster-scoped one).
  kube::ResourcePath collection() const {
    return kube::ResourcePath::from_api_version(api_version, resource);
  }
};

}  // namespace ctrl
