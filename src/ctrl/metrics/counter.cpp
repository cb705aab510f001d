// SPDX-License-Identifier: Apache-2.0
#include "ctrl/metrics/counter.h"

#include <glog/logging.h>

namespace ctrl {

// A decreasing counter would make rate() report a reset; that is always a caller bug.
void Counter::inc(double v) {
  CHECK_GE(v, 0.0) << "counters only go up";
  value_ += v;
}

}  // namespace ctrl
