// SPDX-License-Identifier: Apache-2.0
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <chrono>

#include "ctrl/base/clock.h"
#include "ctrl/base/micro_time.h"
#include "ctrl/leader/leader_election_record.h"
#include "ctrl/leader/leader_elector_state.h"

using ctrl::FakeClock;
using ctrl::LeaderElectionRecord;
using ctrl::LeaderElectorState;
using Action = ctrl::LeaderElectorState::Action;
using namespace std::chrono_literals;

namespace {

LeaderElectionRecord held_by(const std::string& holder, std::int64_t transitions = 3) {
  LeaderElectionRecord r;
  r.holder_identity = holder;
  r.lease_duration = 15s;
  r.acquire_time = ctrl::parse_micro_time("2023-12-31T23:00:00.000000Z");
  r.renew_time = ctrl::parse_micro_time("2023-12-31T23:59:58.000000Z");
  r.lease_transitions = transitions;
  return r;
}

}  // namespace

TEST_CASE("no Lease: create one holding it, transitions 0", "[leader]") {
  FakeClock clock;
  LeaderElectorState state("me", {});
  state.observe(std::nullopt, clock.now());
  const auto d = state.next(clock.now(), clock.wall_now());
  REQUIRE(d.action == Action::create);
  CHECK(d.record.holder_identity == "me");
  CHECK(d.record.lease_duration == 15s);
  CHECK(d.record.acquire_time == clock.wall_now());
  CHECK(d.record.renew_time == clock.wall_now());
  CHECK(d.record.lease_transitions == 0);

  state.written(d.record, clock.now());
  CHECK(state.leading());
  CHECK(state.renew_deadline() == clock.now() + 10s);
}

TEST_CASE("a free lease (no holder) is acquired at once with transitions + 1", "[leader]") {
  FakeClock clock;
  LeaderElectorState state("me", {});
  LeaderElectionRecord free = held_by("", 4);
  state.observe(free, clock.now());
  const auto d = state.next(clock.now(), clock.wall_now());
  REQUIRE(d.action == Action::acquire);
  CHECK(d.record.holder_identity == "me");
  CHECK(d.record.lease_transitions == 5);
  CHECK(d.record.acquire_time == clock.wall_now());
}

TEST_CASE("a released lease (empty holder, 1 s) is acquired without waiting", "[leader]") {
  FakeClock clock;
  const auto released =
      LeaderElectorState::release_record(held_by("other", 7), clock.wall_now() - 100ms);
  CHECK(released.holder_identity.empty());
  CHECK(released.lease_duration == 1s);
  CHECK(released.lease_transitions == 7);
  CHECK(released.acquire_time == clock.wall_now() - 100ms);
  CHECK(released.renew_time == clock.wall_now() - 100ms);

  LeaderElectorState state("me", {});
  state.observe(released, clock.now());  // seen this very instant: no holder, nothing to wait for
  const auto d = state.next(clock.now(), clock.wall_now());
  REQUIRE(d.action == Action::acquire);
  CHECK(d.record.lease_transitions == 8);
}

TEST_CASE("held by another and recently changed: wait until the duration has passed locally",
          "[leader]") {
  FakeClock clock;
  LeaderElectorState state("me", {});
  state.observe(held_by("other"), clock.now());
  clock.step(14900ms);
  // Still the same record: the expiry clock does not restart.
  state.observe(held_by("other"), clock.now());
  auto d = state.next(clock.now(), clock.wall_now());
  CHECK(d.action == Action::wait);
  CHECK_THAT(d.reason, Catch::Contains("held by other"));

  // A renew by the holder restarts the wait from when we saw it.
  auto renewed = held_by("other");
  renewed.renew_time = *renewed.renew_time + 2s;
  state.observe(renewed, clock.now());
  CHECK(state.observed_time() == clock.now());
  clock.step(14s);
  CHECK(state.next(clock.now(), clock.wall_now()).action == Action::wait);
}

TEST_CASE("expiry is judged from the local observation time, not from renewTime", "[leader]") {
  FakeClock clock;
  LeaderElectorState state("me", {});
  // renewTime an hour in the past (a skewed or dead holder), but we only just saw the record.
  auto stale = held_by("other");
  stale.renew_time = clock.wall_now() - 1h;
  state.observe(stale, clock.now());
  CHECK(state.next(clock.now(), clock.wall_now()).action == Action::wait);
  // renewTime in the future does not extend it either.
  LeaderElectorState state2("me", {});
  auto future = held_by("other");
  future.renew_time = clock.wall_now() + 1h;
  state2.observe(future, clock.now());
  clock.step(15s);
  CHECK(state2.next(clock.now(), clock.wall_now()).action == Action::acquire);
}

TEST_CASE("held by another and unchanged for the lease duration: acquire, transitions + 1",
          "[leader]") {
  FakeClock clock;
  LeaderElectorState state("me", {});
  state.observe(held_by("other", 3), clock.now());
  clock.step(15s);  // exactly the duration: observed_time + duration is no longer after now
  state.observe(held_by("other", 3), clock.now());
  const auto d = state.next(clock.now(), clock.wall_now());
  REQUIRE(d.action == Action::acquire);
  CHECK(d.record.holder_identity == "me");
  CHECK(d.record.lease_transitions == 4);
  CHECK(d.record.acquire_time == clock.wall_now());
  CHECK(d.record.renew_time == clock.wall_now());
  CHECK(d.record.lease_duration == 15s);
}

TEST_CASE("the observed leaseDurationSeconds decides expiry, not our own setting", "[leader]") {
  FakeClock clock;
  ctrl::LeaderElectionConfig config;
  config.lease_duration = 30s;
  config.renew_deadline = 20s;
  LeaderElectorState state("me", config);
  auto rec = held_by("other");
  rec.lease_duration = 5s;
  state.observe(rec, clock.now());
  clock.step(4s);
  CHECK(state.next(clock.now(), clock.wall_now()).action == Action::wait);
  clock.step(1s);
  const auto d = state.next(clock.now(), clock.wall_now());
  REQUIRE(d.action == Action::acquire);
  CHECK(d.record.lease_duration == 30s);  // we write ours
}

TEST_CASE("our own lease is renewed: renewTime moves, acquireTime and transitions stay",
          "[leader]") {
  FakeClock clock;
  LeaderElectorState state("me", {});
  state.observe(held_by("other", 1), clock.now());
  clock.step(20s);
  auto acquired = state.next(clock.now(), clock.wall_now());
  REQUIRE(acquired.action == Action::acquire);
  state.written(acquired.record, clock.now());
  REQUIRE(state.leading());

  clock.step(2s);
  state.observe(acquired.record, clock.now());  // what the next GET returns
  const auto d = state.next(clock.now(), clock.wall_now());
  REQUIRE(d.action == Action::renew);
  CHECK(d.record.holder_identity == "me");
  CHECK(d.record.acquire_time == acquired.record.acquire_time);
  CHECK(d.record.renew_time == clock.wall_now());
  CHECK(d.record.lease_transitions == 2);
  state.written(d.record, clock.now());
  CHECK(state.renew_deadline() == clock.now() + 10s);
}

TEST_CASE("a leader whose renews fail until the renew deadline has lost", "[leader]") {
  FakeClock clock;
  LeaderElectorState state("me", {});
  state.observe(std::nullopt, clock.now());
  auto created = state.next(clock.now(), clock.wall_now());
  state.written(created.record, clock.now());

  clock.step(9999ms);  // renews failing (conflicts, timeouts): still within the deadline
  state.observe(created.record, clock.now());
  CHECK(state.next(clock.now(), clock.wall_now()).action == Action::renew);
  clock.step(1ms);
  const auto d = state.next(clock.now(), clock.wall_now());
  REQUIRE(d.action == Action::lost);
  CHECK_THAT(d.reason, Catch::Contains("renew deadline 10.0s"));
  state.step_down();
  CHECK_FALSE(state.leading());
}

TEST_CASE("a leader that sees another holder has lost at once", "[leader]") {
  FakeClock clock;
  LeaderElectorState state("me", {});
  state.observe(std::nullopt, clock.now());
  state.written(state.next(clock.now(), clock.wall_now()).record, clock.now());
  clock.step(2s);
  state.observe(held_by("usurper"), clock.now());
  const auto d = state.next(clock.now(), clock.wall_now());
  REQUIRE(d.action == Action::lost);
  CHECK_THAT(d.reason, Catch::Contains("usurper"));
}

TEST_CASE("a lease naming us while we do not lead is taken back at once, transitions kept",
          "[leader]") {
  FakeClock clock;
  LeaderElectorState state("me", {});
  state.observe(held_by("me", 6), clock.now());
  const auto d = state.next(clock.now(), clock.wall_now());
  REQUIRE(d.action == Action::acquire);
  CHECK(d.record.lease_transitions == 6);
  CHECK(d.record.acquire_time == held_by("me").acquire_time);
}

TEST_CASE("a Lease deleted under the leader is created again", "[leader]") {
  FakeClock clock;
  LeaderElectorState state("me", {});
  state.observe(held_by("other", 2), clock.now());
  clock.step(15s);
  state.written(state.next(clock.now(), clock.wall_now()).record, clock.now());
  clock.step(2s);
  state.observe(std::nullopt, clock.now());
  CHECK(state.next(clock.now(), clock.wall_now()).action == Action::create);
}

TEST_CASE("config validation follows client-go", "[leader]") {
  ctrl::LeaderElectionConfig c;
  CHECK(c.valid());
  CHECK(c.lease_duration == 15s);
  CHECK(c.renew_deadline == 10s);
  CHECK(c.retry_period == 2s);
  c.renew_deadline = 15s;  // must be shorter than the lease
  CHECK_FALSE(c.valid());
  c = {};
  c.retry_period = 9s;  // deadline must exceed 1.2 x retry
  CHECK_FALSE(c.valid());
}

TEST_CASE("MicroTime formats with six fractional digits in UTC", "[leader]") {
  using std::chrono::system_clock;
  const system_clock::time_point t{FakeClock::kDefaultWallStart};
  CHECK(ctrl::format_micro_time(t) == "2024-01-01T00:00:00.000000Z");
  CHECK(ctrl::format_micro_time(t + 1234567891ns) == "2024-01-01T00:00:01.234567Z");
  CHECK(ctrl::format_micro_time(system_clock::time_point{951782400s} + 86399s) ==
        "2000-02-29T23:59:59.000000Z");
  // Before the epoch: truncated toward the past, not toward zero.
  CHECK(ctrl::format_micro_time(system_clock::time_point{} - 1ns) == "1969-12-31T23:59:59.999999Z");
}

TEST_CASE("RFC 3339 times parse in their variants and bad ones are refused", "[leader]") {
  using std::chrono::system_clock;
  const system_clock::time_point start{FakeClock::kDefaultWallStart};
  CHECK(ctrl::parse_micro_time("2024-01-01T00:00:00.000000Z") == start);
  CHECK(ctrl::parse_micro_time("2024-01-01T00:00:00Z") == start);
  CHECK(ctrl::parse_micro_time("2024-01-01t00:00:00z") == start);
  CHECK(ctrl::parse_micro_time("2024-01-01T00:00:01.5Z") == start + 1500ms);
  CHECK(ctrl::parse_micro_time("2024-01-01T00:00:00.123456789Z") == start + 123456789ns);
  CHECK(ctrl::parse_micro_time("2024-01-01T02:30:00+02:30") == start);
  CHECK(ctrl::parse_micro_time("2023-12-31T23:00:00.000000-01:00") == start);
  CHECK(ctrl::parse_micro_time("2024-02-29T00:00:00Z").has_value());  // leap year

  for (const char* bad :
       {"", "2024-01-01", "2024-01-01T00:00:00", "2024-01-01T00:00:00.Z",
        "2024-01-01T00:00:00.1234567890Z", "2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z",
        "2024-01-01T24:00:00Z", "2024-01-01T00:60:00Z", "2024-01-01T00:00:60Z",
        "2024-01-01T00:00:00+0100", "2024-01-01T00:00:00Z ", "24-01-01T00:00:00Z",
        "2024-01-01X00:00:00Z", "2024-1-01T00:00:00Z", "2024-01-01T00:00:00+24:00"}) {
    INFO(bad);
    CHECK_FALSE(ctrl::parse_micro_time(bad).has_value());
  }

  // Round trip at microsecond precision.
  const auto t = start + 987654us + 3h;
  CHECK(ctrl::parse_micro_time(ctrl::format_micro_time(t)) == t);
}

TEST_CASE("a Lease spec reads into a record and is written back whole", "[leader]") {
  rapidjson::Document lease;
  lease.Parse(R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",
    "metadata":{"name":"op","namespace":"ns","resourceVersion":"42"},
    "spec":{"holderIdentity":"host_1","leaseDurationSeconds":15,
            "acquireTime":"2024-01-01T00:00:00.000000Z","renewTime":"2024-01-01T00:00:10.500000Z",
            "leaseTransitions":2}})");
  REQUIRE_FALSE(lease.HasParseError());
  const auto r = LeaderElectionRecord::from_lease(lease);
  CHECK(r.holder_identity == "host_1");
  CHECK(r.lease_duration == 15s);
  const std::chrono::system_clock::time_point start{FakeClock::kDefaultWallStart};
  CHECK(r.acquire_time == start);
  CHECK(r.renew_time == start + 10500ms);
  CHECK(r.lease_transitions == 2);

  auto next = r;
  next.holder_identity = "";
  next.lease_duration = 1s;
  next.to_lease(lease, lease.GetAllocator());
  CHECK(std::string(lease["metadata"]["resourceVersion"].GetString()) == "42");
  const auto& spec = lease["spec"];
  CHECK(std::string(spec["holderIdentity"].GetString()).empty());
  CHECK(spec["leaseDurationSeconds"].GetInt64() == 1);
  CHECK(std::string(spec["renewTime"].GetString()) == "2024-01-01T00:00:10.500000Z");
  CHECK(spec["leaseTransitions"].GetInt64() == 2);
  CHECK(LeaderElectionRecord::from_lease(lease) == next);
}

TEST_CASE("a Lease with missing or malformed fields reads as zero values", "[leader]") {
  rapidjson::Document lease;
  lease.Parse(R"({"metadata":{"name":"op"},
    "spec":{"holderIdentity":7,"leaseDurationSeconds":"15","renewTime":"yesterday"}})");
  REQUIRE_FALSE(lease.HasParseError());
  const auto r = LeaderElectionRecord::from_lease(lease);
  CHECK(r == LeaderElectionRecord{});

  rapidjson::Document no_spec;
  no_spec.Parse(R"({"metadata":{"name":"op"}})");
  CHECK(LeaderElectionRecord::from_lease(no_spec) == LeaderElectionRecord{});
  // Such a lease has no holder: it is free to take.
  FakeClock clock;
  LeaderElectorState state("me", {});
  state.observe(r, clock.now());
  CHECK(state.next(clock.now(), clock.wall_now()).action == Action::acquire);
}
