// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/ctrl/base/: clock and random source, retry backoff, RFC 3339 micro time, uuids, giving
// the heap back. May use: nothing else in src/ (the Rooms table in docs/architecture.md).

#include <chrono>
#include <cstdint>
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
};

// Go's time.Duration(float64): nanoseconds truncated toward zero, saturating instead of
// overflowing. The rate limiters and backoffs copy client-go's float arithmetic with it.
Clock::Duration duration_from_double_ns(double ns);

class RealClock final : public Clock {
 public:
  TimePoint now() const override;
  WallTime wall_now() const override;
};

// A clock that moves only when told to. Steady and wall time advance together.
class FakeClock final : public Clock {
 public:
  // 2024-01-01T00:00:00Z, so wall times in tests are readable and stable.
  static constexpr std::chrono::seconds kDefaultWallStart{1704067200};

  FakeClock();
  FakeClock(TimePoint start, WallTime wall_start);

  TimePoint now() const override { return now_; }
  WallTime wall_now() const override { return wall_; }

  // Moves both clocks forward; a negative step is a bug in the test.
  void step(Duration d);

 private:
  TimePoint now_;
  WallTime wall_;
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
