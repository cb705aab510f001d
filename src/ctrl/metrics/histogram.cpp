// SPDX-License-Identifier: Apache-2.0
#include "ctrl/metrics/histogram.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>

namespace ctrl {

Histogram::Histogram(std::vector<double> upper_bounds) : upper_bounds_(std::move(upper_bounds)) {
  if (!upper_bounds_.empty() && std::isinf(upper_bounds_.back()) && upper_bounds_.back() > 0) {
    upper_bounds_.pop_back();
  }
  for (std::size_t i = 0; i < upper_bounds_.size(); ++i) {
    CHECK(!std::isnan(upper_bounds_[i]));
    if (i > 0) CHECK_LT(upper_bounds_[i - 1], upper_bounds_[i]) << "buckets must increase";
  }
  counts_.assign(upper_bounds_.size() + 1, 0);
}

void Histogram::observe(double v) {
  // Like client_golang: the first bucket whose bound is >= v, since `le` means "less or equal".
  const auto it = std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), v);
  ++counts_[static_cast<std::size_t>(it - upper_bounds_.begin())];
  sum_ += v;
  ++count_;
}

std::vector<std::uint64_t> Histogram::cumulative_counts() const {
  std::vector<std::uint64_t> out(upper_bounds_.size());
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < upper_bounds_.size(); ++i) {
    running += counts_[i];
    out[i] = running;
  }
  return out;
}

std::vector<double> exponential_buckets(double start, double factor, int count) {
  CHECK_GT(start, 0.0);
  CHECK_GT(factor, 1.0);
  CHECK_GE(count, 1);
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(count));
  double bound = start;
  for (int i = 0; i < count; ++i) {
    out.push_back(bound);
    bound *= factor;
  }
  return out;
}

std::vector<double> reconcile_time_buckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
          0.7,   0.8,  0.9,   1.0,  1.25, 1.5,  1.75, 2.0,  2.5, 3.0,  3.5, 4.0,  4.5, 5,
          6,     7,    8,     9,    10,   15,   20,   25,   30,  40,   50,  60};
}

std::vector<double> workqueue_duration_buckets() {
  return exponential_buckets(10e-9, 10, 12);
}

}  // namespace ctrl
