// SPDX-License-Identifier: Apache-2.0
#include "ctrl/base/exception_text.h"

namespace ctrl {

std::string exception_text(std::exception_ptr e) {
  if (!e) return {};
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace ctrl
