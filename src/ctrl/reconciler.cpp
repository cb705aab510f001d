// SPDX-License-Identifier: Apache-2.0
#include "ctrl/reconciler.h"

namespace asop {

ReconcileResult ReconcileResult::failed(std::string_view doing, const ApiError& api_error) {
  std::string message = std::string(doing) + ": " + api_error.describe();
  if (api_error.is(Errc::conflict)) return conflict(std::move(message));
  return error(std::move(message));
}

}  // namespace asop
