// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/awaitable.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kube {
class RestClient;
}

namespace ctrl {

// Who a bearer token belongs to, as a TokenReview's status.user says.
struct UserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
};

// `error` is set when the review itself failed (unreachable API server, 5xx, our own RBAC
// missing): no decision, and nothing to cache.
struct TokenReviewResult {
  bool authenticated = false;
  UserInfo user;
  std::string error;
};
struct AccessReviewResult {
  bool allowed = false;
  std::string reason;
  std::string error;
};

// Asks the API server who a token is and what they may do: the delegated authentication and
// authorization of kube-rbac-proxy and controller-runtime's secure metrics.
class AccessReviewer {
 public:
  virtual ~AccessReviewer() = default;
  virtual boost::asio::awaitable<TokenReviewResult> review_token(std::string token) = 0;
  // A SubjectAccessReview for a non-resource URL (path, verb).
  virtual boost::asio::awaitable<AccessReviewResult> review_access(UserInfo user, std::string path,
                                                                   std::string verb) = 0;
};

// TokenReview and SubjectAccessReview (v1) through the operator's own client: needs `create` on
// tokenreviews.authentication.k8s.io and subjectaccessreviews.authorization.k8s.io.
class ApiAccessReviewer : public AccessReviewer {
 public:
  explicit ApiAccessReviewer(std::shared_ptr<kube::RestClient> client);
  boost::asio::awaitable<TokenReviewResult> review_token(std::string token) override;
  boost::asio::awaitable<AccessReviewResult> review_access(UserInfo user, std::string path,
                                                           std::string verb) override;

 private:
  std::shared_ptr<kube::RestClient> client_;
};

}  // namespace ctrl
