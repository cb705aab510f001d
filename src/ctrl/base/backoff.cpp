// SPDX-License-Identifier: Apache-2.0
#include "ctrl/base/backoff.h"

#include <glog/logging.h>

#include <algorithm>

namespace ctrl {

using Duration = Clock::Duration;

Backoff::Backoff(const Clock& clock, Random& random) : Backoff(clock, random, Options{}) {}

Backoff::Backoff(const Clock& clock, Random& random, Options options)
    : clock_(clock), random_(random), options_(options), current_(options.initial) {
  CHECK_GT(options_.initial.count(), 0);
  CHECK_GE(options_.max, options_.initial);
  CHECK_GE(options_.factor, 1.0);
  CHECK_GE(options_.jitter, 0.0);
}

Duration Backoff::next() {
  // exponentialBackoffManagerImpl.getNextBackoff: a long quiet spell since the previous failure
  // means the connection was healthy, so start over.
  const Clock::TimePoint now = clock_.now();
  if (last_failure_ && now - *last_failure_ > options_.reset_after) current_ = options_.initial;
  last_failure_ = now;

  // wait.Backoff.Step: return the current delay (jittered), then grow it for next time.
  const Duration delay = current_;
  current_ = std::min(options_.max, duration_from_double_ns(static_cast<double>(current_.count()) *
                                                            options_.factor));
  if (options_.jitter <= 0.0) return delay;
  // wait.Jitter: d + rand.Float64() * maxFactor * d.
  return delay + duration_from_double_ns(random_.float64() * options_.jitter *
                                         static_cast<double>(delay.count()));
}

void Backoff::reset() {
  current_ = options_.initial;
  last_failure_.reset();
}

}  // namespace ctrl
