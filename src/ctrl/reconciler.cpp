// SPDX-License-Identifier: Apache-2.0
#include "ctrl/reconciler.h"

namespace ctrl {

ObjectKey ObjectKey::from_key(const std::string& key) {
  auto slash = key.find('/');
  if (slash == std::string::npos) return ObjectKey({}, key);
  return ObjectKey(key.substr(0, slash), key.substr(slash + 1));
}

std::string ObjectKey::key() const {
  return ns.empty() ? name : ns + "/" + name;
}

ReconcileResult ReconcileResult::failed(std::string_view doing, const kube::ApiError& api_error) {
  std::string message = std::string(doing) + ": " + api_error.describe();
  if (api_error.is(kube::Errc::conflict)) return conflict(std::move(message));
  return error(std::move(message));
}

}  // namespace ctrl
