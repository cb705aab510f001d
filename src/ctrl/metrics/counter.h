// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace ctrl {

// A Prometheus counter: only goes up (it resets only when the process restarts).
class Counter {
 public:
  void inc(double v = 1.0);
  double value() const { return value_; }

 private:
  double value_ = 0.0;
};

}  // namespace ctrl
