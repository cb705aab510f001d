#include "kube/resource_path.h"

#include <glog/logging.h>

namespace kube {

ResourcePath ResourcePath::from_api_version(std::string_view api_version,
                                            std::string_view resource) {
  ResourcePath p;
  const auto slash = api_version.find('/');
  if (slash == std::string_view::npos) {
    p.version = std::string(api_version);
  } else {
    p.group = std::string(api_version.substr(0, slash));
    p.version = std::string(api_version.substr(slash + 1));
  }
  p.resource = std::string(resource);
  return p;
}

ResourcePath ResourcePath::in_namespace(std::string_view n) const {
  ResourcePath p = *this;
  p.ns = std::string(n);
  return p;
}

ResourcePath ResourcePath::named(std::string_view n) const {
  ResourcePath p = *this;
  p.name = std::string(n);
  return p;
}

ResourcePath ResourcePath::sub(std::string_view s) const {
  ResourcePath p = *this;
  p.subresource = std::string(s);
  return p;
}

std::string ResourcePath::api_version() const {
  return group.empty() ? version : group + "/" + version;
}

std::string ResourcePath::path() const {
  CHECK(!version.empty()) << "ResourcePath without a version";
  CHECK(!resource.empty()) << "ResourcePath without a resource";
  CHECK(subresource.empty() || !name.empty())
      << "subresource " << subresource << " of " << resource << " needs an object name";
  std::string out = group.empty()
                        ? "/api/" + UrlQuery::encode(version)
                        : "/apis/" + UrlQuery::encode(group) + "/" + UrlQuery::encode(version);
  if (!ns.empty()) out += "/namespaces/" + UrlQuery::encode(ns);
  out += "/" + UrlQuery::encode(resource);
  if (!name.empty()) out += "/" + UrlQuery::encode(name);
  if (!subresource.empty()) out += "/" + UrlQuery::encode(subresource);
  return out;
}

std::string ResourcePath::target(const UrlQuery& query) const {
  return query.empty() ? path() : path() + "?" + query.str();
}

}  // namespace kube
