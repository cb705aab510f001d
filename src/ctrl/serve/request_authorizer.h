// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ctrl/base/clock.h"
#include "ctrl/metrics/metrics_registry.h"
#include "ctrl/serve/access_reviewer.h"

namespace ctrl {

// Authenticates a request's bearer token with a TokenReview and authorizes it for (path, verb)
// with a SubjectAccessReview, as controller-runtime's filters.WithAuthenticationAndAuthorization
// does for secure metrics. Decisions are cached with its TTLs: a token's review for a minute
// (authenticated or not), an allowed access for 5 minutes, a denied one for 30 s; failed reviews
// are not cached. Reviews in flight are capped: past the cap a request is answered "busy" at once,
// so a flood of distinct bad tokens costs the API server (and the operator's client, which the
// reconcilers share) at most `max_in_flight` reviews at a time. Tokens are kept only as SHA-256
// digests and never logged.
class RequestAuthorizer {
 public:
  enum class Verdict { allowed, unauthenticated, forbidden, busy, error };

  struct Options {
    Options() = default;  // not an aggregate: GCC 12 co_await temporaries (kube/list_options.h)
    Clock::Duration token_ttl = std::chrono::minutes(1);
    Clock::Duration allow_ttl = std::chrono::minutes(5);
    Clock::Duration deny_ttl = std::chrono::seconds(30);
    std::size_t max_in_flight = 4;
    std::size_t max_cache_entries = 4096;  // per cache; expired entries go first, then all
  };

  // `metrics` may be null; else it counts reviews in metrics_auth_reviews_total{review,result}.
  RequestAuthorizer(AccessReviewer& reviewer, const Clock& clock, Options options,
                    MetricsRegistry* metrics);

  // `authorization` is the request's Authorization header (empty when absent).
  boost::asio::awaitable<Verdict> authorize(std::string authorization, std::string path,
                                            std::string verb);

  std::size_t in_flight() const { return in_flight_; }

 private:
  struct TokenEntry {
    bool authenticated = false;
    UserInfo user;
    Clock::TimePoint expires;
  };
  struct AccessEntry {
    bool allowed = false;
    Clock::TimePoint expires;
  };
  template <class Map>
  void make_room(Map& map);
  void count(const char* review, const char* result);

  AccessReviewer& reviewer_;
  const Clock& clock_;
  Options options_;
  MetricsRegistry* metrics_;
  std::unordered_map<std::string, TokenEntry> tokens_;   // by SHA-256 of the token
  std::unordered_map<std::string, AccessEntry> access_;  // by user, groups, path and verb
  std::size_t in_flight_ = 0;
};

// The token of an "Authorization: Bearer <token>" header (scheme case-insensitive), or empty.
std::string bearer_token(std::string_view authorization);

}  // namespace ctrl
