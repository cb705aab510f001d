// SPDX-License-Identifier: Apache-2.0
#include "ctrl/base/backoff.h"

#include <catch2/catch.hpp>
#include <chrono>

using namespace std::chrono_literals;
using ctrl::Clock;

TEST_CASE("watch backoff doubles from 0.8 s to 30 s", "[ratelimiter]") {
  ctrl::FakeClock clock;
  ctrl::FakeRandom random(0.0);
  ctrl::Backoff backoff(clock, random);
  const std::vector<Clock::Duration> expected = {800ms,   1600ms,  3200ms, 6400ms,
                                                 12800ms, 25600ms, 30s,    30s};
  for (const auto& want : expected) {
    CHECK(backoff.next() == want);
    clock.step(1s);
  }
}

TEST_CASE("watch backoff adds jitter from the injected random source", "[ratelimiter]") {
  ctrl::FakeClock clock;
  ctrl::FakeRandom random(0.5);
  ctrl::Backoff backoff(clock, random);
  // wait.Jitter(d, 1.0): d + 0.5 * d.
  CHECK(backoff.next() == Clock::Duration(1200ms));
  CHECK(backoff.next() == Clock::Duration(2400ms));
  random.set(0.25);
  CHECK(backoff.next() == Clock::Duration(4000ms));
}

TEST_CASE("watch backoff resets after two quiet minutes or on reset()", "[ratelimiter]") {
  ctrl::FakeClock clock;
  ctrl::FakeRandom random(0.0);
  ctrl::Backoff backoff(clock, random);
  CHECK(backoff.next() == Clock::Duration(800ms));
  CHECK(backoff.next() == Clock::Duration(1600ms));

  // Exactly two minutes is not yet "more than" two minutes.
  clock.step(2min);
  CHECK(backoff.next() == Clock::Duration(3200ms));
  clock.step(2min + 1ms);
  CHECK(backoff.next() == Clock::Duration(800ms));
  CHECK(backoff.next() == Clock::Duration(1600ms));

  backoff.reset();
  CHECK(backoff.next() == Clock::Duration(800ms));
}

TEST_CASE("watch backoff honours custom options", "[ratelimiter]") {
  ctrl::FakeClock clock;
  ctrl::FakeRandom random(0.9);
  ctrl::Backoff::Options options;
  options.initial = 1s;
  options.max = 3s;
  options.jitter = 0.0;
  ctrl::Backoff backoff(clock, random, options);
  CHECK(backoff.next() == Clock::Duration(1s));
  CHECK(backoff.next() == Clock::Duration(2s));
  CHECK(backoff.next() == Clock::Duration(3s));
  CHECK(backoff.next() == Clock::Duration(3s));
}
