// SPDX-License-Identifier: Apache-2.0
#include "ctrl/serve/access_reviewer.h"

#include <rapidjson/document.h>

#include "kube/api/rest_client.h"
#include "kube/core/json_access.h"

namespace ctrl {
namespace {

using rapidjson::Value;

using kube::json::member;
using kube::json::strings;
using kube::json::text;

Value string_array(const std::vector<std::string>& items, rapidjson::Document::AllocatorType& a) {
  Value out(rapidjson::kArrayType);
  for (const auto& s : items) out.PushBack(Value(s.c_str(), a), a);
  return out;
}

}  // namespace

ApiAccessReviewer::ApiAccessReviewer(std::shared_ptr<kube::RestClient> client)
    : client_(std::move(client)) {}

boost::asio::awaitable<TokenReviewResult> ApiAccessReviewer::review_token(std::string token) {
  rapidjson::Document body(rapidjson::kObjectType);
  auto& a = body.GetAllocator();
  body.AddMember("apiVersion", "authentication.k8s.io/v1", a);
  body.AddMember("kind", "TokenReview", a);
  Value spec(rapidjson::kObjectType);
  spec.AddMember("token", Value(token.c_str(), a), a);
  body.AddMember("spec", spec, a);
  auto result = co_await client_->create(
      kube::ResourcePath::from_api_version("authentication.k8s.io/v1", "tokenreviews"), body);
  TokenReviewResult out;
  if (!result.ok()) {
    out.error = "TokenReview: " + result.error().describe();
    co_return out;
  }
  const Value* status = member(result.value().body.get(), "status");
  out.authenticated = kube::json::boolean(member(status, "authenticated"));
  const Value* user = member(status, "user");
  out.user.username = text(member(user, "username"));
  out.user.uid = text(member(user, "uid"));
  out.user.groups = strings(member(user, "groups"));
  if (const Value* extra = member(user, "extra"); extra && extra->IsObject()) {
    for (const auto& m : extra->GetObject()) {
      out.user.extra[std::string(m.name.GetString(), m.name.GetStringLength())] = strings(&m.value);
    }
  }
  if (out.authenticated && out.user.username.empty()) {
    out.authenticated = false;  // an identity without a name cannot be authorized
  }
  co_return out;
}

boost::asio::awaitable<AccessReviewResult> ApiAccessReviewer::review_access(UserInfo user,
                                                                            std::string path,
                                                                            std::string verb) {
  rapidjson::Document body(rapidjson::kObjectType);
  auto& a = body.GetAllocator();
  body.AddMember("apiVersion", "authorization.k8s.io/v1", a);
  body.AddMember("kind", "SubjectAccessReview", a);
  Value spec(rapidjson::kObjectType);
  spec.AddMember("user", Value(user.username.c_str(), a), a);
  if (!user.uid.empty()) spec.AddMember("uid", Value(user.uid.c_str(), a), a);
  spec.AddMember("groups", string_array(user.groups, a), a);
  if (!user.extra.empty()) {
    Value extra(rapidjson::kObjectType);
    for (const auto& [k, v] : user.extra)
      extra.AddMember(Value(k.c_str(), a), string_array(v, a), a);
    spec.AddMember("extra", extra, a);
  }
  Value attributes(rapidjson::kObjectType);
  attributes.AddMember("path", Value(path.c_str(), a), a);
  attributes.AddMember("verb", Value(verb.c_str(), a), a);
  spec.AddMember("nonResourceAttributes", attributes, a);
  body.AddMember("spec", spec, a);
  auto result = co_await client_->create(
      kube::ResourcePath::from_api_version("authorization.k8s.io/v1", "subjectaccessreviews"),
      body);
  AccessReviewResult out;
  if (!result.ok()) {
    out.error = "SubjectAccessReview: " + result.error().describe();
    co_return out;
  }
  const Value* status = member(result.value().body.get(), "status");
  const Value* allowed = member(status, "allowed");
  out.allowed = allowed && allowed->IsBool() && allowed->GetBool();
  const Value* denied = member(status, "denied");
  if (denied && denied->IsBool() && denied->GetBool()) out.allowed = false;
  out.reason = text(member(status, "reason"));
  co_return out;
}

}  // namespace ctrl
