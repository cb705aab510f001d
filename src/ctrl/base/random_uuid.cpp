// SPDX-License-Identifier: Apache-2.0
#include "ctrl/base/random_uuid.h"

namespace ctrl {

std::string random_uuid(Random& random) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(36, '-');
  for (int i = 0; i < 36; ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) continue;
    id[i] = kHex[random.int_between(0, 15)];
  }
  id[14] = '4';
  id[19] = kHex[8 + random.int_between(0, 3)];
  return id;
}

}  // namespace ctrl
