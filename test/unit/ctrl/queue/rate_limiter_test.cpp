// SPDX-License-Identifier: Apache-2.0
#include "ctrl/queue/rate_limiter.h"

#include <catch2/catch.hpp>
#include <chrono>

using namespace std::chrono_literals;
using ctrl::Clock;

TEST_CASE("exponential limiter doubles from 5 ms per item and caps at 1000 s", "[ratelimiter]") {
  ctrl::ItemExponentialFailureRateLimiter limiter(5ms, 1000s);
  Clock::Duration expected = 5ms;
  // 5 ms * 2^17 = 655.36 s is the last uncapped delay; 2^18 would be 1310.72 s.
  for (int i = 0; i < 18; ++i) {
    INFO("failure " << i);
    CHECK(limiter.when("a") == expected);
    expected *= 2;
  }
  CHECK(limiter.num_requeues("a") == 18);
  for (int i = 0; i < 2000; ++i) REQUIRE(limiter.when("a") == Clock::Duration(1000s));
  CHECK(limiter.num_requeues("a") == 2018);

  // Other items are independent.
  CHECK(limiter.num_requeues("b") == 0);
  CHECK(limiter.when("b") == Clock::Duration(5ms));
  CHECK(limiter.when("b") == Clock::Duration(10ms));
}

TEST_CASE("forget restarts an item's backoff from the base delay", "[ratelimiter]") {
  ctrl::ItemExponentialFailureRateLimiter limiter(5ms, 1000s);
  limiter.when("a");
  limiter.when("a");
  limiter.when("b");
  CHECK(limiter.when("a") == Clock::Duration(20ms));
  limiter.forget("a");
  CHECK(limiter.num_requeues("a") == 0);
  CHECK(limiter.when("a") == Clock::Duration(5ms));
  CHECK(limiter.num_requeues("b") == 1);
}

TEST_CASE("bucket limiter allows a burst of 100, then 10 per second", "[ratelimiter]") {
  ctrl::FakeClock clock;
  ctrl::BucketRateLimiter limiter(clock, 10.0, 100);
  for (int i = 0; i < 100; ++i) REQUIRE(limiter.when("x") == Clock::Duration::zero());
  // Each further request borrows a token that refills 100 ms after the one before it.
  CHECK(limiter.when("x") == Clock::Duration(100ms));
  CHECK(limiter.when("x") == Clock::Duration(200ms));
  CHECK(limiter.when("x") == Clock::Duration(300ms));
  // The bucket never counts requeues or remembers items.
  CHECK(limiter.num_requeues("x") == 0);

  // 300 ms repays the 3 borrowed tokens; the next one waits 100 ms again.
  clock.step(300ms);
  CHECK(limiter.when("y") == Clock::Duration(100ms));

  // A second later 10 tokens came back; one repays the debt, 9 are free, then a wait.
  clock.step(1s);
  for (int i = 0; i < 9; ++i) REQUIRE(limiter.when("z") == Clock::Duration::zero());
  CHECK(limiter.when("z") == Clock::Duration(100ms));
}

TEST_CASE("bucket limiter never holds more than its burst", "[ratelimiter]") {
  ctrl::FakeClock clock;
  ctrl::BucketRateLimiter limiter(clock, 10.0, 100);
  clock.step(1h);
  for (int i = 0; i < 100; ++i) REQUIRE(limiter.when("x") == Clock::Duration::zero());
  CHECK(limiter.when("x") == Clock::Duration(100ms));
}

TEST_CASE("default controller limiter is the max of per-item backoff and the bucket",
          "[ratelimiter]") {
  ctrl::FakeClock clock;
  auto limiter = ctrl::default_controller_rate_limiter(clock);
  // Distinct items within the burst: only the per-item 5 ms applies.
  for (int i = 0; i < 99; ++i) REQUIRE(limiter->when("item-" + std::to_string(i)) == 5ms);
  CHECK(limiter->when("a") == Clock::Duration(5ms));  // 100th token
  // The bucket is empty now: the 101st request waits for it, not for the 10 ms of backoff.
  CHECK(limiter->when("a") == Clock::Duration(100ms));
  CHECK(limiter->num_requeues("a") == 2);
  limiter->forget("a");
  CHECK(limiter->num_requeues("a") == 0);

  // Once the bucket has refilled, per-item backoff dominates again.
  clock.step(60s);
  for (int i = 0; i < 5; ++i) limiter->when("b");
  CHECK(limiter->when("b") == Clock::Duration(160ms));
}
