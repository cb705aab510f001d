// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ctrl/base/clock.h"

namespace ctrl {

// How long an item should wait before it is retried: client-go's workqueue.RateLimiter.
class RateLimiter {
 public:
  using Duration = Clock::Duration;

  virtual ~RateLimiter() = default;
  // The delay for the next retry of `item`; each call counts as one failure.
  virtual Duration when(const std::string& item) = 0;
  // Stops tracking `item` (it succeeded): its next failure starts from the base delay again.
  virtual void forget(const std::string& item) = 0;
  // Failures recorded for `item` since the last forget.
  virtual int num_requeues(const std::string& item) const = 0;
};

// client-go's ItemExponentialFailureRateLimiter: base * 2^failures per item, capped at max.
class ItemExponentialFailureRateLimiter final : public RateLimiter {
 public:
  ItemExponentialFailureRateLimiter(Duration base_delay, Duration max_delay);

  Duration when(const std::string& item) override;
  void forget(const std::string& item) override;
  int num_requeues(const std::string& item) const override;

 private:
  Duration base_delay_;
  Duration max_delay_;
  std::unordered_map<std::string, int> failures_;
};

// client-go's BucketRateLimiter: one token bucket shared by all items, with the semantics of
// golang.org/x/time/rate's Reserve().Delay(): a request always gets a reservation, and the delay
// is how long until the bucket would have refilled the token it borrowed.
class BucketRateLimiter final : public RateLimiter {
 public:
  BucketRateLimiter(const Clock& clock, double tokens_per_second, int burst);

  Duration when(const std::string& item) override;
  void forget(const std::string&) override {}
  int num_requeues(const std::string&) const override { return 0; }

 private:
  const Clock& clock_;
  double limit_;
  double burst_;
  double tokens_;          // may go negative: tokens already promised to future reservations
  Clock::TimePoint last_;  // when tokens_ was last brought up to date
};

// client-go's MaxOfRateLimiter: asks every limiter (each call counts in all of them) and waits
// for the longest.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters);

  Duration when(const std::string& item) override;
  void forget(const std::string& item) override;
  int num_requeues(const std::string& item) const override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// client-go's DefaultControllerRateLimiter: max(per-item exponential 5 ms..1000 s, overall token
// bucket 10/s with burst 100). The bucket only matters when many items fail at once.
std::unique_ptr<RateLimiter> default_controller_rate_limiter(const Clock& clock);

}  // namespace ctrl
