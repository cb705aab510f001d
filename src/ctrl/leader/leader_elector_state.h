// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

#include "ctrl/base/clock.h"
#include "ctrl/leader/leader_election_config.h"
#include "ctrl/leader/leader_election_record.h"

namespace ctrl {

// The decisions of client-go's LeaderElector.tryAcquireOrRenew, free of I/O: the driver
// (leader_elector.h) reads the Lease, feeds what it saw to observe(), asks decide() what to do,
// writes the record it is given and reports success with written(). Unit tests drive it with a
// FakeClock and no API server.
class LeaderElectorState {
 public:
  enum class Action {
    create,   // no Lease yet: create it holding `record`
    acquire,  // take the Lease (free, released, expired, or already naming us): write `record`
    renew,    // we lead: write `record` (renewTime now, acquireTime and transitions kept)
    wait,     // someone else holds a lease that has not expired: try again later
    lost,     // we led but may no longer: stop acting as leader at once
  };
  struct Decision {
    Decision() = default;  // not an aggregate: GCC 12 co_await temporaries
    Action action = Action::wait;
    LeaderElectionRecord record;  // what to write, for create, acquire and renew
    std::string reason;           // why, for logs (wait and lost)
  };

  // Everything decide() looks at.
  struct Input {
    Input() = default;
    // The Lease as last read; empty when it does not exist.
    std::optional<LeaderElectionRecord> observed;
    // Local (monotonic) time at which `observed` was last seen to change. Expiry is judged from
    // it plus the observed leaseDurationSeconds, never from renewTime: the holder's wall clock
    // may be skewed against ours, so client-go only trusts its own clock.
    Clock::TimePoint observed_time{};
    std::string identity;
    Clock::TimePoint now{};
    Clock::WallTime wall_now{};
    bool leading = false;
    // While leading: local time of the last successful create, acquire or renew.
    Clock::TimePoint last_renew{};
    LeaderElectionConfig config;
  };

  // The pure decision.
  static Decision decide(const Input& in);

  // The record that gives the lease up (client-go's ReleaseOnCancel): no holder, a 1 s duration
  // so that even a standby that missed the change waits at most a second, transitions kept.
  static LeaderElectionRecord release_record(const LeaderElectionRecord& observed,
                                             Clock::WallTime wall_now);

  LeaderElectorState(std::string identity, LeaderElectionConfig config);

  // What a read of the Lease returned (empty: 404). A record equal to the last one observed keeps
  // the old observed time; a different one restarts the expiry clock at `now`.
  void observe(std::optional<LeaderElectionRecord> record, Clock::TimePoint now);
  // decide() on the current state.
  Decision next(Clock::TimePoint now, Clock::WallTime wall_now) const;
  // The write of `record` (from create, acquire or renew) succeeded: we lead, the expiry clock and
  // the renew deadline restart at `now`.
  void written(const LeaderElectionRecord& record, Clock::TimePoint now);
  // We no longer act as leader (lost, released or stopped).
  void step_down() { leading_ = false; }

  bool leading() const { return leading_; }
  // Deadline for the next successful renew; meaningful only while leading.
  Clock::TimePoint renew_deadline() const { return last_renew_ + config_.renew_deadline; }
  const std::optional<LeaderElectionRecord>& observed() const { return observed_; }
  Clock::TimePoint observed_time() const { return observed_time_; }
  const std::string& identity() const { return identity_; }
  const LeaderElectionConfig& config() const { return config_; }

 private:
  std::string identity_;
  LeaderElectionConfig config_;
  std::optional<LeaderElectionRecord> observed_;
  bool observed_once_ = false;
  Clock::TimePoint observed_time_{};
  bool leading_ = false;
  Clock::TimePoint last_renew_{};
};

}  // namespace ctrl
