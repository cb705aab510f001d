// SPDX-License-Identifier: Apache-2.0
#include "ctrl/base/clock.h"

#include <glog/logging.h>

#include <cmath>
#include <limits>

namespace ctrl {

Clock::Duration duration_from_double_ns(double ns) {
  using Duration = Clock::Duration;
  if (ns >= static_cast<double>(std::numeric_limits<Duration::rep>::max())) return Duration::max();
  return Duration(static_cast<Duration::rep>(ns));
}

Clock::TimePoint RealClock::now() const {
  return std::chrono::steady_clock::now();
}

Clock::WallTime RealClock::wall_now() const {
  return std::chrono::system_clock::now();
}

// The steady start is arbitrary but far from the epoch, so "time_point{}" never looks like "now".
FakeClock::FakeClock()
    : FakeClock(TimePoint{} + std::chrono::hours(1000), WallTime{} + kDefaultWallStart) {}

FakeClock::FakeClock(TimePoint start, WallTime wall_start) : now_(start), wall_(wall_start) {}

std::uint64_t Clock::on_step(StepListener) const {
  return 0;
}

void Clock::forget_step(std::uint64_t) const {}

std::uint64_t SteppingClock::on_step(StepListener listener) const {
  listeners_.emplace(next_listener_, std::move(listener));
  return next_listener_++;
}

void SteppingClock::forget_step(std::uint64_t id) const {
  listeners_.erase(id);
}

void SteppingClock::tell_step_listeners() const {
  // A listener may forget itself or another while called: call a copy.
  const auto listeners = listeners_;
  for (const auto& [id, listener] : listeners) {
    if (listeners_.count(id)) listener();
  }
}

void FakeClock::step(Duration d) {
  CHECK_GE(d.count(), 0) << "FakeClock cannot go backwards";
  now_ += d;
  wall_ += std::chrono::duration_cast<WallTime::duration>(d);
  tell_step_listeners();
}

Clock::TimePoint ShiftableClock::now() const {
  return std::chrono::steady_clock::now() + shift();
}

Clock::WallTime ShiftableClock::wall_now() const {
  return std::chrono::system_clock::now() + std::chrono::duration_cast<WallTime::duration>(shift());
}

void ShiftableClock::step(Duration d) {
  CHECK_GE(d.count(), 0) << "ShiftableClock cannot go backwards";
  shift_ns_ += d.count();
  tell_step_listeners();
}

std::int64_t Random::int_between(std::int64_t lo, std::int64_t hi) {
  CHECK_LE(lo, hi);
  const double span = static_cast<double>(hi) - static_cast<double>(lo) + 1.0;
  auto offset = static_cast<std::int64_t>(std::floor(float64() * span));
  // float64() < 1 keeps offset <= hi - lo, except for rounding on huge spans.
  if (offset > hi - lo) offset = hi - lo;
  return lo + offset;
}

SeededRandom::SeededRandom() : engine_(std::random_device{}()) {}

SeededRandom::SeededRandom(std::uint64_t seed) : engine_(seed) {}

double SeededRandom::float64() {
  // 53 random bits scaled into [0, 1), the way Go's Float64 does it; generate_canonical may
  // return exactly 1.0 on some library versions.
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

FakeRandom::FakeRandom(double value) : value_(0) {
  set(value);
}

void FakeRandom::set(double value) {
  CHECK(value >= 0.0 && value < 1.0) << "FakeRandom value must be in [0, 1): " << value;
  value_ = value;
}

}  // namespace ctrl
