// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace ctrl {

// A Prometheus gauge: a value that goes up and down.
class Gauge {
 public:
  void set(double v) { value_ = v; }
  void add(double v) { value_ += v; }
  void inc() { add(1.0); }
  void dec() { add(-1.0); }
  double value() const { return value_; }

 private:
  double value_ = 0.0;
};

}  // namespace ctrl
