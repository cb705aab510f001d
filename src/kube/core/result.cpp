// SPDX-License-Identifier: Apache-2.0
#include "kube/core/result.h"

#include <glog/logging.h>

namespace asop {

void result_misuse(const char* what, const ApiError* error) {
  LOG(FATAL) << what << (error != nullptr ? ": " + error->describe() : std::string());
  std::abort();  // LOG(FATAL) does not return; this tells the compiler so.
}

}  // namespace asop
