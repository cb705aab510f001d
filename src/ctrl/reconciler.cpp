// SPDX-License-Identifier: Apache-2.0
#include "ctrl/reconciler.h"

namespace ctrl {

Request Request::from_key(const std::string& key) {
  auto slash = key.find('/');
  if (slash == std::string::npos) return Request({}, key);
  return Request(key.substr(0, slash), key.substr(slash + 1));
}

std::string Request::key() const {
  return ns.empty() ? name : ns + "/" + name;
}

}  // namespace ctrl
