// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <vector>

namespace ctrl {

// A Prometheus histogram: counts of observations per upper bound (`le`), plus sum and count.
// Counts are kept per bucket and made cumulative when read, as the exposition format wants.
class Histogram {
 public:
  // `upper_bounds` must be strictly increasing; +Inf is implicit (and dropped if given).
  explicit Histogram(std::vector<double> upper_bounds);

  void observe(double v);

  const std::vector<double>& upper_bounds() const { return upper_bounds_; }
  // Observations <= upper_bounds()[i], for each i; the +Inf bucket is count().
  std::vector<std::uint64_t> cumulative_counts() const;
  double sum() const { return sum_; }
  std::uint64_t count() const { return count_; }

 private:
  std::vector<double> upper_bounds_;
  std::vector<std::uint64_t> counts_;  // per bucket, last one is +Inf
  double sum_ = 0.0;
  std::uint64_t count_ = 0;
};

// prometheus.ExponentialBuckets: `count` bounds starting at `start`, each `factor` times the last.
std::vector<double> exponential_buckets(double start, double factor, int count);

// controller-runtime's controller_runtime_reconcile_time_seconds buckets: 5 ms to 60 s, dense
// below 1 s where healthy reconciles land.
std::vector<double> reconcile_time_buckets();

// controller-runtime's workqueue duration buckets: ExponentialBuckets(10e-9, 10, 12), 10 ns to
// 1000 s.
std::vector<double> workqueue_duration_buckets();

}  // namespace ctrl
