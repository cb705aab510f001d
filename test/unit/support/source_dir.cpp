// SPDX-License-Identifier: Apache-2.0
#include "support/source_dir.h"

namespace kube::testing {

const std::string& source_dir() {
  static const std::string dir = ASOP_SOURCE_DIR;
  return dir;
}

}  // namespace kube::testing
