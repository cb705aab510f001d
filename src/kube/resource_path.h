#pragma once

#include <string>
#include <string_view>

#include "kube/url_query.h"

namespace kube {

// Where a resource lives on the API server: group/version/resource, optionally a namespace, an
// object name and a subresource. A value type; builders return modified copies so one base path
// ("apps/v1 deployments") can be specialised per request.
//
//   core, namespaced:  /api/v1/namespaces/NS/configmaps/NAME
//   grouped, cluster:  /apis/rbac.authorization.k8s.io/v1/clusterroles/NAME
//   subresource:       /apis/apps/v1/namespaces/NS/deployments/NAME/status
struct ResourcePath {
  // Not an aggregate: see ListOptions (GCC 12 co_await temporaries).
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

  // "v1" or "apps/v1".
  std::string api_version() const;
  // The URL path, each segment percent-encoded. A subresource needs a name (CHECKed).
  std::string path() const;
  // path() plus "?query" when the query is not empty.
  std::string target(const UrlQuery& query) const;

  bool operator==(const ResourcePath&) const = default;
};

}  // namespace kube
