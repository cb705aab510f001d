// SPDX-License-Identifier: Apache-2.0
#include "ctrl/queue/rate_limiter.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>

namespace ctrl {

using Duration = Clock::Duration;

ItemExponentialFailureRateLimiter::ItemExponentialFailureRateLimiter(Duration base_delay,
                                                                     Duration max_delay)
    : base_delay_(base_delay), max_delay_(max_delay) {
  CHECK_GT(base_delay.count(), 0);
  CHECK_GE(max_delay, base_delay);
}

Duration ItemExponentialFailureRateLimiter::when(const std::string& item) {
  const int exp = failures_[item]++;
  // Computed in floating point, as client-go does, so a long failure streak saturates at max
  // instead of overflowing.
  const double backoff = static_cast<double>(base_delay_.count()) * std::pow(2.0, exp);
  if (backoff >= static_cast<double>(max_delay_.count())) return max_delay_;
  return duration_from_double_ns(backoff);
}

void ItemExponentialFailureRateLimiter::forget(const std::string& item) {
  failures_.erase(item);
}

int ItemExponentialFailureRateLimiter::num_requeues(const std::string& item) const {
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second;
}

// A new limiter starts full, as rate.NewLimiter does in effect (its zero `last` makes the first
// advance fill the bucket).
BucketRateLimiter::BucketRateLimiter(const Clock& clock, double tokens_per_second, int burst)
    : clock_(clock), limit_(tokens_per_second), burst_(burst), tokens_(burst), last_(clock.now()) {
  CHECK_GT(tokens_per_second, 0.0);
  CHECK_GT(burst, 0);
}

Duration BucketRateLimiter::when(const std::string&) {
  // rate.Limiter.reserveN(now, 1, InfDuration): refill for the elapsed time (never above burst),
  // take one token, and if that leaves a debt, wait until it is repaid at `limit_` per second.
  const Clock::TimePoint now = clock_.now();
  if (now > last_) {
    const double elapsed_s = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed_s * limit_);
    last_ = now;
  }
  tokens_ -= 1.0;
  if (tokens_ >= 0.0) return Duration::zero();
  return duration_from_double_ns(-tokens_ / limit_ * 1e9);
}

MaxOfRateLimiter::MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
    : limiters_(std::move(limiters)) {
  CHECK(!limiters_.empty());
}

Duration MaxOfRateLimiter::when(const std::string& item) {
  Duration longest = Duration::zero();
  for (auto& limiter : limiters_) longest = std::max(longest, limiter->when(item));
  return longest;
}

void MaxOfRateLimiter::forget(const std::string& item) {
  for (auto& limiter : limiters_) limiter->forget(item);
}

int MaxOfRateLimiter::num_requeues(const std::string& item) const {
  int most = 0;
  for (const auto& limiter : limiters_) most = std::max(most, limiter->num_requeues(item));
  return most;
}

std::unique_ptr<RateLimiter> default_controller_rate_limiter(const Clock& clock) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialFailureRateLimiter>(
      std::chrono::milliseconds(5), std::chrono::seconds(1000)));
  limiters.push_back(std::make_unique<BucketRateLimiter>(clock, 10.0, 100));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace ctrl
