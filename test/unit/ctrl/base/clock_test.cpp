// SPDX-License-Identifier: Apache-2.0
#include "ctrl/base/clock.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <set>

using namespace std::chrono_literals;

TEST_CASE("FakeClock moves only when stepped, steady and wall together", "[clock]") {
  ctrl::FakeClock clock;
  const auto start = clock.now();
  const auto wall_start = clock.wall_now();
  CHECK(wall_start.time_since_epoch() == ctrl::FakeClock::kDefaultWallStart);
  CHECK(clock.now() == start);

  clock.step(1500ms);
  CHECK(clock.now() - start == 1500ms);
  CHECK(clock.wall_now() - wall_start == 1500ms);

  clock.step(0ms);
  CHECK(clock.now() - start == 1500ms);
}

TEST_CASE("FakeClock can start at a chosen time", "[clock]") {
  const ctrl::Clock::TimePoint start{};
  const ctrl::Clock::WallTime wall{std::chrono::seconds(42)};
  ctrl::FakeClock clock(start, wall);
  clock.step(3s);
  CHECK(clock.now() == start + 3s);
  CHECK(clock.wall_now() == wall + 3s);
}

TEST_CASE("RealClock is monotonic and its wall time is near the system clock", "[clock]") {
  ctrl::RealClock clock;
  const auto a = clock.now();
  const auto b = clock.now();
  CHECK(b >= a);
  const auto diff = clock.wall_now() - std::chrono::system_clock::now();
  CHECK(std::chrono::abs(diff) < 5s);
}

TEST_CASE("ShiftableClock is real time plus its steps, and tells its listeners", "[clock]") {
  ctrl::ShiftableClock clock;
  CHECK(std::chrono::abs(clock.now() - std::chrono::steady_clock::now()) < 5s);
  int heard = 0;
  const auto id = clock.on_step([&] { ++heard; });
  const auto before = std::chrono::steady_clock::now();
  clock.step(1h);
  CHECK(heard == 1);
  CHECK(clock.shift() == 1h);
  CHECK(clock.now() - before >= 1h);
  CHECK(clock.now() - before < 1h + 5min);
  CHECK(std::chrono::abs(clock.wall_now() - std::chrono::system_clock::now() - 1h) < 5s);
  clock.forget_step(id);
  clock.step(1s);
  CHECK(heard == 1);
}

TEST_CASE("SeededRandom is reproducible and stays within 0 to 1", "[clock]") {
  ctrl::SeededRandom a(7);
  ctrl::SeededRandom b(7);
  ctrl::SeededRandom c(8);
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    const double x = a.float64();
    CHECK(x == b.float64());
    if (x != c.float64()) differs = true;
    REQUIRE(x >= 0.0);
    REQUIRE(x < 1.0);
  }
  CHECK(differs);
}

TEST_CASE("Random::int_between covers both ends and nothing outside", "[clock]") {
  ctrl::SeededRandom random(1);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const auto v = random.int_between(300, 303);
    REQUIRE(v >= 300);
    REQUIRE(v <= 303);
    seen.insert(v);
  }
  CHECK(seen == std::set<std::int64_t>{300, 301, 302, 303});

  // Pinned randomness gives the ends exactly, which is what timeout tests rely on.
  ctrl::FakeRandom fake(0.0);
  CHECK(fake.int_between(300, 600) == 300);
  fake.set(0.999999);
  CHECK(fake.int_between(300, 600) == 600);
  fake.set(0.5);
  CHECK(fake.int_between(300, 600) == 450);
  CHECK(fake.float64() == 0.5);
}
