// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kube {

// Whom to act as (kubeconfig as, as-uid, as-groups, as-user-extra): the API server checks that the
// credential may impersonate, then authorizes each request as this user.
struct Impersonation {
  std::string user;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;

  bool empty() const { return user.empty() && uid.empty() && groups.empty() && extra.empty(); }
};

// The Impersonate-User, -Uid, -Group (one per group) and -Extra-<key> (one per value) headers, as
// client-go's impersonatingRoundTripper sends them: an extra key is percent-encoded where it holds
// a byte that is not an HTTP token character, or '%'.
std::vector<std::pair<std::string, std::string>> impersonation_headers(const Impersonation& as);

// Why `as` cannot be sent, or empty: groups, uid or extra without a user (the API server refuses
// them), an empty extra key, or a value with a control character (it would split the header).
std::string impersonation_problem(const Impersonation& as);

}  // namespace kube
