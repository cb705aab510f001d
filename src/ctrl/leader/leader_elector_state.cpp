// SPDX-License-Identifier: Apache-2.0
#include "ctrl/leader/leader_elector_state.h"

#include <glog/logging.h>

#include <utility>

namespace ctrl {
namespace chr = std::chrono;

namespace {

// The server keeps MicroTime, so a record we write reads back equal only when its times are
// already whole microseconds.
Clock::WallTime to_micros(Clock::WallTime t) {
  return chr::floor<chr::microseconds>(t);
}

std::string seconds_text(Clock::Duration d) {
  const auto ms = chr::duration_cast<chr::milliseconds>(d).count();
  return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + "s";
}

}  // namespace

LeaderElectorState::Decision LeaderElectorState::decide(const Input& in) {
  CHECK(!in.identity.empty()) << "leader election needs an identity";
  Decision d;
  LeaderElectionRecord fresh;
  fresh.holder_identity = in.identity;
  fresh.lease_duration = in.config.lease_duration;
  fresh.acquire_time = to_micros(in.wall_now);
  fresh.renew_time = fresh.acquire_time;

  // client-go's renew loop gives up once RenewDeadline passes without a successful renew; a
  // standby may take the lease lease_duration after it last saw a change, which is later.
  if (in.leading && in.now - in.last_renew >= in.config.renew_deadline) {
    d.action = Action::lost;
    d.reason = "no successful renew for " + seconds_text(in.now - in.last_renew) +
               " (renew deadline " + seconds_text(in.config.renew_deadline) + ")";
    return d;
  }

  // Not found: create it (client-go does so even when it believed it led: the Lease was deleted).
  if (!in.observed) {
    d.action = Action::create;
    d.record = std::move(fresh);
    return d;
  }
  const LeaderElectionRecord& old = *in.observed;

  if (in.leading) {
    // client-go would keep retrying until the renew deadline here, but a record naming someone
    // else means they acquired it: acting on as leader until the deadline risks two leaders.
    if (old.holder_identity != in.identity) {
      d.action = Action::lost;
      d.reason = old.holder_identity.empty() ? std::string("the lease was released by someone else")
                                             : "the lease is now held by " + old.holder_identity;
      return d;
    }
    d.action = Action::renew;
    fresh.acquire_time = old.acquire_time;
    fresh.lease_transitions = old.lease_transitions;
    d.record = std::move(fresh);
    return d;
  }

  if (!old.holder_identity.empty() && old.holder_identity != in.identity &&
      in.observed_time + old.lease_duration > in.now) {
    d.action = Action::wait;
    d.reason = "held by " + old.holder_identity + ", expires in " +
               seconds_text(in.observed_time + old.lease_duration - in.now) + " unless renewed";
    return d;
  }

  d.action = Action::acquire;
  if (old.holder_identity == in.identity) {
    // Already ours (a restart with the same identity): client-go's IsLeader() is true, so it
    // keeps acquireTime and the transition count.
    fresh.acquire_time = old.acquire_time ? old.acquire_time : fresh.acquire_time;
    fresh.lease_transitions = old.lease_transitions;
  } else {
    fresh.lease_transitions = old.lease_transitions + 1;
  }
  d.record = std::move(fresh);
  return d;
}

LeaderElectionRecord LeaderElectorState::release_record(const LeaderElectionRecord& observed,
                                                        Clock::WallTime wall_now) {
  LeaderElectionRecord r;
  r.lease_duration = chr::seconds(1);
  r.acquire_time = to_micros(wall_now);
  r.renew_time = r.acquire_time;
  r.lease_transitions = observed.lease_transitions;
  return r;
}

LeaderElectorState::LeaderElectorState(std::string identity, LeaderElectionConfig config)
    : identity_(std::move(identity)), config_(config) {
  CHECK(!identity_.empty()) << "leader election needs an identity";
  CHECK(config_.valid()) << "invalid leader election timing: lease duration "
                         << config_.lease_duration.count() << "s must exceed the renew deadline "
                         << config_.renew_deadline.count()
                         << "ms, which must exceed 1.2 x the retry period "
                         << config_.retry_period.count() << "ms";
}

void LeaderElectorState::observe(std::optional<LeaderElectionRecord> record, Clock::TimePoint now) {
  // client-go compares the raw record with the last one seen; equal fields are the same thing.
  if (observed_once_ && record == observed_) return;
  observed_ = std::move(record);
  observed_time_ = now;
  observed_once_ = true;
}

LeaderElectorState::Decision LeaderElectorState::next(Clock::TimePoint now,
                                                      Clock::WallTime wall_now) const {
  Input in;
  in.observed = observed_;
  in.observed_time = observed_time_;
  in.identity = identity_;
  in.now = now;
  in.wall_now = wall_now;
  in.leading = leading_;
  in.last_renew = last_renew_;
  in.config = config_;
  return decide(in);
}

void LeaderElectorState::written(const LeaderElectionRecord& record, Clock::TimePoint now) {
  CHECK(record.holder_identity == identity_) << "only our own record makes us leader";
  observed_ = record;
  observed_time_ = now;
  observed_once_ = true;
  leading_ = true;
  last_renew_ = now;
}

}  // namespace ctrl
