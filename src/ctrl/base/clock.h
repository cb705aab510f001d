// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/ctrl/base/: clock and random source, retry backoff, RFC 3339 micro time, uuids, giving
// the heap back. May use: nothing else in src/ (the Rooms table in docs/architecture.md).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <random>

namespace ctrl {

// Time as the runtime sees it. client-go's workqueue, reflector and leader election take a clock
// "so tests can manipulate time"; every time-dependent piece here does the same, so unit tests
// step a FakeClock instead of sleeping.
class Clock {
 public:
  using Duration = std::chrono::nanoseconds;
  using TimePoint = std::chrono::steady_clock::time_point;
  using WallTime = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;
  // Monotonic time: for durations, deadlines and ordering.
  virtual TimePoint now() const = 0;
  // Calendar time: only for values written to the API server (Lease acquireTime/renewTime).
  virtual WallTime wall_now() const = 0;

  // Timers that follow this clock. A waiter arms a steady_timer for the time left on this clock
  // (point - now()), and subscribes here to re-arm when the clock jumps: RealClock never jumps
  // (its time is the steady clock's), a FakeClock calls every listener after each step, so a
  // delayed add due in an hour runs as soon as a test steps the clock an hour. Listeners are
  // called on the thread that steps the clock, which must be the one running the timers.
  using StepListener = std::function<void()>;
  virtual std::uint64_t on_step(StepListener listener) const;  // an id for forget_step
  virtual void forget_step(std::uint64_t id) const;
};

// Go's time.Duration(float64): nanoseconds truncated toward zero, saturating instead of
// overflowing. The rate limiters and backoffs copy client-go's float arithmetic with it.
Clock::Duration duration_from_double_ns(double ns);

class RealClock final : public Clock {
 public:
  TimePoint now() const override;
  WallTime wall_now() const override;
};

// A clock that jumps (FakeClock, ShiftableClock): it keeps the step listeners and calls them after
// each step.
class SteppingClock : public Clock {
 public:
  std::uint64_t on_step(StepListener listener) const override;
  void forget_step(std::uint64_t id) const override;

 protected:
  void tell_step_listeners() const;

 private:
  mutable std::map<std::uint64_t, StepListener> listeners_;
  mutable std::uint64_t next_listener_ = 1;
};

// A clock that moves only when told to. Steady and wall time advance together.
class FakeClock final : public SteppingClock {
 public:
  // 2024-01-01T00:00:00Z, so wall times in tests are readable and stable.
  static constexpr std::chrono::seconds kDefaultWallStart{1704067200};

  FakeClock();
  FakeClock(TimePoint start, WallTime wall_start);

  TimePoint now() const override { return now_; }
  WallTime wall_now() const override { return wall_; }

  // Moves both clocks forward, then tells the step listeners; a negative step is a bug in the
  // test.
  void step(Duration d);

 private:
  TimePoint now_;
  WallTime wall_;
};

// Real time moved forward by what tests add (the asop::testing kit's clock): timers run in real
// time as in production, so a test that never steps it sees nothing unusual, and step(d) makes
// what is due within d run now (a requeue_after(1h) with step(1h)). now() may be read from any
// thread; step() must run on the thread that runs the timers (the listeners re-arm them).
class ShiftableClock final : public SteppingClock {
 public:
  TimePoint now() const override;
  WallTime wall_now() const override;
  void step(Duration d);
  Duration shift() const { return Duration(shift_ns_.load()); }

 private:
  std::atomic<Duration::rep> shift_ns_{0};
};

// A source of randomness for jitter (backoff, watch timeouts), injected like the clock so tests
// can pin it.
class Random {
 public:
  virtual ~Random() = default;
  // Uniform in [0, 1), like Go's rand.Float64.
  virtual double float64() = 0;
  // Uniform integer in [lo, hi] (both inclusive), built on float64().
  std::int64_t int_between(std::int64_t lo, std::int64_t hi);
};

// Mersenne Twister with an explicit seed: reproducible when the seed is fixed, and seeded from
// std::random_device by default.
class SeededRandom final : public Random {
 public:
  SeededRandom();
  explicit SeededRandom(std::uint64_t seed);
  double float64() override;

 private:
  std::mt19937_64 engine_;
};

// Always returns the value it was given, so a test can compute exact jittered durations.
class FakeRandom final : public Random {
 public:
  explicit FakeRandom(double value = 0.0);
  void set(double value);
  double float64() override { return value_; }

 private:
  double value_;
};

}  // namespace ctrl
