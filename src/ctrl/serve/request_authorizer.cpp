// SPDX-License-Identifier: Apache-2.0
#include "ctrl/serve/request_authorizer.h"

#include <glog/logging.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cctype>

#include "kube/core/text.h"

namespace ctrl {
namespace {

std::string sha256(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

std::string access_key(const UserInfo& user, std::string_view path, std::string_view verb) {
  std::string key = user.username + '\0' + user.uid + '\0';
  for (const auto& g : user.groups) key += g + '\1';
  key += '\0';
  for (const auto& [k, values] : user.extra) {
    key += k + '\2';
    for (const auto& v : values) key += v + '\1';
  }
  key += '\0';
  key += path;
  key += '\0';
  key += verb;
  return key;
}

// Keeps the in-flight count right on every path out of a review, exceptions included.
struct InFlight {
  explicit InFlight(std::size_t& n) : n(n) { ++n; }
  ~InFlight() { --n; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  std::size_t& n;
};

}  // namespace

std::string bearer_token(std::string_view authorization) {
  authorization = kube::trim(authorization);
  const auto space = authorization.find(' ');
  if (space == std::string_view::npos) return {};
  const auto scheme = authorization.substr(0, space);
  static constexpr std::string_view kBearer = "bearer";
  if (scheme.size() != kBearer.size() ||
      !std::equal(scheme.begin(), scheme.end(), kBearer.begin(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == b;
      })) {
    return {};
  }
  const auto token = kube::trim(authorization.substr(space + 1));
  // A token is one word; anything else is not a bearer token.
  if (token.find_first_of(" \t") != std::string_view::npos) return {};
  return std::string(token);
}

RequestAuthorizer::RequestAuthorizer(AccessReviewer& reviewer, const Clock& clock, Options options,
                                     MetricsRegistry* metrics)
    : reviewer_(reviewer), clock_(clock), options_(options), metrics_(metrics) {}

void RequestAuthorizer::count(const char* review, const char* result) {
  if (!metrics_) return;
  metrics_
      ->counter("metrics_auth_reviews_total",
                "TokenReviews and SubjectAccessReviews sent for requests to the metrics endpoint, "
                "by review and result.",
                {{"review", review}, {"result", result}})
      .inc();
}

template <class Map>
void RequestAuthorizer::make_room(Map& map) {
  if (map.size() < options_.max_cache_entries) return;
  const auto now = clock_.now();
  std::erase_if(map, [now](const auto& kv) { return kv.second.expires <= now; });
  if (map.size() >= options_.max_cache_entries) map.clear();
}

boost::asio::awaitable<RequestAuthorizer::Verdict> RequestAuthorizer::authorize(
    std::string authorization, std::string path, std::string verb) {
  const std::string token = bearer_token(authorization);
  if (token.empty()) co_return Verdict::unauthenticated;

  const std::string token_key = sha256(token);
  UserInfo user;
  auto t = tokens_.find(token_key);
  if (t != tokens_.end() && t->second.expires > clock_.now()) {
    if (!t->second.authenticated) co_return Verdict::unauthenticated;
    user = t->second.user;
  } else {
    if (in_flight_ >= options_.max_in_flight) co_return Verdict::busy;
    TokenReviewResult review;
    {
      InFlight guard(in_flight_);
      review = co_await reviewer_.review_token(token);
    }
    if (!review.error.empty()) {
      count("TokenReview", "error");
      LOG(WARNING) << "metrics authentication failed: " << review.error;
      co_return Verdict::error;
    }
    count("TokenReview", review.authenticated ? "authenticated" : "unauthenticated");
    make_room(tokens_);
    tokens_[token_key] = {review.authenticated, review.user, clock_.now() + options_.token_ttl};
    if (!review.authenticated) co_return Verdict::unauthenticated;
    user = std::move(review.user);
  }

  const std::string key = access_key(user, path, verb);
  auto a = access_.find(key);
  if (a != access_.end() && a->second.expires > clock_.now()) {
    co_return a->second.allowed ? Verdict::allowed : Verdict::forbidden;
  }
  if (in_flight_ >= options_.max_in_flight) co_return Verdict::busy;
  AccessReviewResult review;
  {
    InFlight guard(in_flight_);
    review = co_await reviewer_.review_access(user, path, verb);
  }
  if (!review.error.empty()) {
    count("SubjectAccessReview", "error");
    LOG(WARNING) << "metrics authorization of user " << user.username
                 << " failed: " << review.error;
    co_return Verdict::error;
  }
  count("SubjectAccessReview", review.allowed ? "allowed" : "denied");
  make_room(access_);
  access_[key] = {review.allowed,
                  clock_.now() + (review.allowed ? options_.allow_ttl : options_.deny_ttl)};
  if (!review.allowed) {
    VLOG(1) << "metrics: " << verb << " " << path << " denied to user " << user.username
            << (review.reason.empty() ? "" : ": " + review.reason);
    co_return Verdict::forbidden;
  }
  co_return Verdict::allowed;
}

}  // namespace ctrl
