// SPDX-License-Identifier: Apache-2.0
#pragma once

// The kit's Catch2 (v2) parts; include after <catch2/catch.hpp>.

#include <string>

#include "asop/testing/eventually.h"

namespace asop::testing {

// The running test case's name: a TestNamespace hint.
inline std::string current_test_name() {
  return Catch::getResultCapture().getCurrentTestName();
}

}  // namespace asop::testing

// Waits until `expr` holds, polling every 50 ms for at most `timeout`, then asserts it once more,
// so a failure prints Catch's expansion of the last value seen (the expression runs once more
// then: keep it free of effects that change its answer):
//   REQUIRE_EVENTUALLY(ready_status(client, ns) == "True", 30s);
//   ... with expansion: "False" == "True"
#define REQUIRE_EVENTUALLY(expr, timeout)                                                  \
  do {                                                                                     \
    (void)::asop::testing::eventually([&] { return static_cast<bool>(expr); }, (timeout)); \
    REQUIRE(expr);                                                                         \
  } while (false)
#define CHECK_EVENTUALLY(expr, timeout)                                                    \
  do {                                                                                     \
    (void)::asop::testing::eventually([&] { return static_cast<bool>(expr); }, (timeout)); \
    CHECK(expr);                                                                           \
  } while (false)
// Asserts `expr` holds at every poll for `duration` (what must not happen, e.g. a write at rest).
#define REQUIRE_CONSISTENTLY(expr, duration) \
  REQUIRE(::asop::testing::consistently([&] { return static_cast<bool>(expr); }, (duration)))
