// SPDX-License-Identifier: Apache-2.0
#include "ctrl/base/free_heap.h"

#include <malloc.h>

namespace ctrl {

void release_free_heap() {
  malloc_trim(0);
}

}  // namespace ctrl
