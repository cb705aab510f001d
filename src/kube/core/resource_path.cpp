// SPDX-License-Identifier: Apache-2.0
#include "kube/core/resource_path.h"

#include <glog/logging.h>

namespace asop {

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

namespace {

// client-go's path.IsValidPathSegmentName, plus: a segment that is set may not be empty.
std::string segment_problem(std::string_view what, std::string_view segment) {
  if (segment == "." || segment == "..") {
    return std::string(what) + " may not be \"" + std::string(segment) + "\"";
  }
  if (segment.find('/') != std::string_view::npos) {
    return std::string(what) + " may not contain '/'";
  }
  if (segment.find('%') != std::string_view::npos) {
    return std::string(what) + " may not contain '%'";
  }
  return {};
}

}  // namespace

std::string ResourcePath::invalid_reason(Target target) const {
  if (version.empty()) return "resource path has no version";
  if (resource.empty()) return "resource path has no resource";
  if (target == Target::object && name.empty()) {
    return "resource name may not be empty (" + resource + ")";
  }
  if (target == Target::collection && !name.empty()) {
    return "a collection request may not name an object (" + resource + " " + name + ")";
  }
  if (!subresource.empty() && name.empty()) {
    return "subresource " + subresource + " of " + resource + " needs an object name";
  }
  // Only a set namespace or name is checked: empty means "all namespaces" or "the collection".
  const std::pair<std::string_view, const std::string*> segments[] = {
      {"group", &group},  {"version", &version}, {"resource", &resource},
      {"namespace", &ns}, {"name", &name},       {"subresource", &subresource},
  };
  for (const auto& [what, value] : segments) {
    if (value->empty()) continue;
    if (auto problem = segment_problem(what, *value); !problem.empty()) return problem;
  }
  return {};
}

std::optional<ApiError> ResourcePath::refusal(Target target, std::string_view verb) const {
  std::string reason = invalid_reason(target);
  if (reason.empty()) return std::nullopt;
  ApiError err;
  err.code = make_error_code(Errc::bad_request);
  err.reason = std::string(default_reason(Errc::bad_request));
  err.message = std::string(verb) + " not sent: " + reason;
  return err;
}

std::string ResourcePath::api_version() const {
  return group.empty() ? version : group + "/" + version;
}

std::string ResourcePath::path() const {
  CHECK(!version.empty()) << "ResourcePath without a version";
  CHECK(!resource.empty()) << "ResourcePath without a resource";
  CHECK(subresource.empty() || !name.empty())
      << "subresource " << subresource << " of " << resource << " needs an object name";
  std::string out = group.empty() ? "/api/" + kube::UrlQuery::encode(version)
                                  : "/apis/" + kube::UrlQuery::encode(group) + "/" +
                                        kube::UrlQuery::encode(version);
  if (!ns.empty()) out += "/namespaces/" + kube::UrlQuery::encode(ns);
  out += "/" + kube::UrlQuery::encode(resource);
  if (!name.empty()) out += "/" + kube::UrlQuery::encode(name);
  if (!subresource.empty()) out += "/" + kube::UrlQuery::encode(subresource);
  return out;
}

}  // namespace asop

namespace kube {

std::string request_target(const ResourcePath& path, const UrlQuery& query) {
  return query.empty() ? path.path() : path.path() + "?" + query.str();
}

}  // namespace kube
