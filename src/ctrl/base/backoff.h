// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <optional>

#include "ctrl/base/clock.h"

namespace ctrl {

// Delay before reconnecting a watch or list after a failure: client-go's reflector uses
// wait.NewExponentialBackoffManager(800ms, 30s, 2min, 2.0, 1.0, clock), and this copies it.
// The delay doubles from `initial` up to `max`; jitter adds up to `jitter` times the delay (so a
// capped delay may reach max * (1 + jitter), as in client-go); a failure more than `reset_after`
// after the previous one starts again from `initial`.
class Backoff {
 public:
  using Duration = Clock::Duration;

  struct Options {
    Duration initial = std::chrono::milliseconds(800);
    Duration max = std::chrono::seconds(30);
    double factor = 2.0;
    double jitter = 1.0;
    Duration reset_after = std::chrono::minutes(2);
  };

  Backoff(const Clock& clock, Random& random);
  Backoff(const Clock& clock, Random& random, Options options);

  // Records a failure now and returns how long to wait before the next attempt.
  Duration next();
  // Forgets earlier failures (for example after a watch delivered events for a while).
  void reset();

 private:
  const Clock& clock_;
  Random& random_;
  Options options_;
  Duration current_;
  std::optional<Clock::TimePoint> last_failure_;
};

}  // namespace ctrl
