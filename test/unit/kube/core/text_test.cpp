// SPDX-License-Identifier: Apache-2.0
#include "kube/core/text.h"

#include <catch2/catch.hpp>

TEST_CASE("trim: whitespace of every kind off both ends, nothing inside", "[text]") {
  CHECK(kube::trim("  token\n") == "token");
  CHECK(kube::trim("\t\r\n\f\va b\v\f\n\r\t") == "a b");
  CHECK(kube::trim("Bearer  x") == "Bearer  x");
  CHECK(kube::trim("").empty());
  CHECK(kube::trim(" \t\n").empty());
  const std::string_view s = " in (a, b) ";
  CHECK(kube::trim(s).data() == s.data() + 1);  // a view into the input, no copy
}
