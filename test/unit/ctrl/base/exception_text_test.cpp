// SPDX-License-Identifier: Apache-2.0
#include "ctrl/base/exception_text.h"

#include <catch2/catch.hpp>
#include <stdexcept>

TEST_CASE("exception_text: what() of a std::exception, a fixed text for anything else",
          "[exception_text]") {
  CHECK(ctrl::exception_text(std::make_exception_ptr(std::runtime_error("disk full"))) ==
        "disk full");
  CHECK(ctrl::exception_text(std::make_exception_ptr(42)) == "unknown exception");
  CHECK(ctrl::exception_text(nullptr).empty());
}
