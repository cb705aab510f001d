// SPDX-License-Identifier: Apache-2.0
#pragma once

// Public API (docs/library.md): which resource a request or a cache is about. Kind names a kind
// as objects spell it; ResourcePath is the URL of a collection, an object or a subresource.

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "asop/errors.h"

namespace asop {

// The group of an apiVersion: "apps/v1" -> "apps", "v1" (the core group) -> "".
inline std::string_view group_of(std::string_view api_version) {
  const auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view{} : api_version.substr(0, slash);
}

// Where a resource lives on the API server: group/version/resource, optionally a namespace, an
// object name and a subresource. A value type; builders return modified copies so one base path
// ("apps/v1 deployments") can be specialised per request.
//
//   core, namespaced:  /api/v1/namespaces/NS/configmaps/NAME
//   grouped, cluster:  /apis/rbac.authorization.k8s.io/v1/clusterroles/NAME
//   subresource:       /apis/apps/v1/namespaces/NS/deployments/NAME/status
struct ResourcePath {
  // Not an aggregate: GCC 12 co_await temporaries.
  ResourcePath() = default;

  std::string group;  // empty for the core group
  std::string version;
  std::string resource;  // plural, lower case: "configmaps"
  std::string ns;        // empty: cluster-scoped, or all namespaces for a collection
  std::string name;      // empty: the collection
  std::string subresource;

  // From an apiVersion as objects spell it: "v1" (core) or "apps/v1".
  static ResourcePath from_api_version(std::string_view api_version, std::string_view resource);

  ResourcePath in_namespace(std::string_view n) const;
  ResourcePath named(std::string_view n) const;
  ResourcePath sub(std::string_view s) const;  // "status", "scale", "finalizers"

  // What a request needs the path to name: every object verb needs one object (a name), a list,
  // watch or create needs the collection (no name).
  enum class Target { object, collection };
  // Why this path may not be sent, or empty when it may. As client-go's IsValidPathSegmentName,
  // no segment may be "." or "..", or contain "/" or "%": the server decodes the path before
  // routing, so such a segment would address another resource. An object path needs a name, so
  // an empty name never turns DELETE of one object into DELETE of the whole collection.
  std::string invalid_reason(Target target) const;
  // The error a `verb` request gets instead of being sent (Errc::bad_request, no HTTP status), or
  // none when the path is valid for `target`.
  std::optional<ApiError> refusal(Target target, std::string_view verb) const;

  // "v1" or "apps/v1".
  std::string api_version() const;
  // The URL path, each segment percent-encoded. A subresource needs a name (aborts without one).
  std::string path() const;

  bool operator==(const ResourcePath&) const = default;
};

// A kind of object the way a controller names it: what an Event's involvedObject and an
// ownerReference say (apiVersion, kind) and where the API serves it (resource, scope), e.g.
// {"apps/v1", "Deployment", "deployments"}. What controller-runtime learns from a Go type and a
// RESTMapper is spelled out here.
struct Kind {
  enum class Scope { namespaced, cluster };

  Kind() = default;  // not an aggregate: GCC 12 co_await temporaries
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
  std::string group() const { return std::string(group_of(api_version)); }
  // The collection in every namespace (or the cluster-scoped one).
  ResourcePath collection() const { return ResourcePath::from_api_version(api_version, resource); }
};

}  // namespace asop
