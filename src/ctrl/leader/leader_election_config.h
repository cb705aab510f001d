// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>

namespace ctrl {

// Timing of leader election; the defaults are client-go's and controller-runtime's (15 s, 10 s,
// 2 s). valid() is client-go's NewLeaderElector check: the lease must outlast the renew deadline,
// and the deadline must leave room for more than one jittered retry, so a leader that cannot renew
// stops acting before anyone else may take the lease.
struct LeaderElectionConfig {
  // Not an aggregate: see kube/list_options.h (GCC 12 co_await temporaries).
  LeaderElectionConfig() = default;

  // How long a standby waits, from the moment it last saw the lease change, before taking it.
  std::chrono::seconds lease_duration{15};
  // How long a leader keeps acting without a successful renew.
  std::chrono::milliseconds renew_deadline{std::chrono::seconds(10)};
  // Interval between attempts to acquire or renew.
  std::chrono::milliseconds retry_period{std::chrono::seconds(2)};
  // A standby waits retry_period * (1 + jitter * rand) between attempts, like client-go's
  // JitterUntil(RetryPeriod, 1.2), so standbys do not hit the API server in step.
  double jitter_factor = 1.2;

  bool valid() const {
    return lease_duration > renew_deadline && retry_period.count() > 0 &&
           renew_deadline.count() > 1.2 * static_cast<double>(retry_period.count()) &&
           jitter_factor >= 0.0;
  }
};

}  // namespace ctrl
