// SPDX-License-Identifier: Apache-2.0
#include "asop/testing/eventually.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "asop/testing/catch.h"

using namespace std::chrono_literals;

TEST_CASE("eventually returns the first value that holds, or the last one at the deadline",
          "[testing]") {
  int calls = 0;
  CHECK(asop::testing::eventually([&] { return ++calls >= 3; }, 5s, 1ms));
  CHECK(calls == 3);

  calls = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto last = asop::testing::eventually(
      [&]() -> std::optional<std::string> {
        if (++calls > 1000000) return "never";
        return std::nullopt;
      },
      50ms, 5ms);
  CHECK_FALSE(last.has_value());
  CHECK(calls >= 2);
  CHECK(std::chrono::steady_clock::now() - start >= 50ms);
}

TEST_CASE("consistently fails at the first poll that does not hold", "[testing]") {
  int calls = 0;
  CHECK_FALSE(asop::testing::consistently([&] { return ++calls < 3; }, 5s, 1ms));
  CHECK(calls == 3);
  CHECK(asop::testing::consistently([] { return true; }, 20ms, 5ms));
}

TEST_CASE("REQUIRE_EVENTUALLY waits for its expression, then asserts it", "[testing]") {
  int calls = 0;
  const auto tick = [&] { return ++calls; };
  REQUIRE_EVENTUALLY(tick() >= 4, 5s);
  CHECK(calls == 5);  // four polls, then the assertion's own evaluation
  REQUIRE_CONSISTENTLY(calls == 5, 20ms);
}
