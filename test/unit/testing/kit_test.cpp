// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "asop/testing/catch.h"
#include "asop/testing/eventually.h"
#include "asop/testing/test_app.h"

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

TEST_CASE("Writes counts by method and code and says what it counted", "[testing]") {
  asop::testing::Writes writes;
  CHECK(writes.total() == 0);
  CHECK(writes.text() == "none");
  writes.counts[{"PATCH", "201"}] = 3;
  writes.counts[{"PATCH", "409"}] = 1;
  writes.counts[{"POST", "201"}] = 2;
  CHECK(writes.total() == 6);
  CHECK(writes.count("PATCH", "201") == 3);
  CHECK(writes.count("DELETE", "200") == 0);
  CHECK(writes.text() == "PATCH 201 x3, PATCH 409 x1, POST 201 x2");
}
