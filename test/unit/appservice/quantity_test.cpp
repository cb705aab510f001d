// SPDX-License-Identifier: Apache-2.0
#include "appservice/quantity.h"

#include <catch2/catch.hpp>

using namespace appservice;

TEST_CASE("quantity: values of the forms the API server accepts", "[appservice]") {
  CHECK(*parse_quantity("2") == Approx(2));
  CHECK(*parse_quantity("500m") == Approx(0.5));
  CHECK(*parse_quantity(".5") == Approx(0.5));
  CHECK(*parse_quantity("1Ki") == Approx(1024));
  CHECK(*parse_quantity("1.5Gi") == Approx(1.5 * 1024 * 1024 * 1024));
  CHECK(*parse_quantity("1e3") == Approx(1000));
  CHECK(*parse_quantity("1E3") == Approx(1000));
  CHECK(*parse_quantity("1E") == Approx(1e18));  // exa, not an exponent
  CHECK(*parse_quantity("-1k") == Approx(-1000));
  CHECK_FALSE(parse_quantity(""));
  CHECK_FALSE(parse_quantity("lots"));
  CHECK_FALSE(parse_quantity("1KB"));
  CHECK_FALSE(parse_quantity("1.2.3"));
}

TEST_CASE("quantity: canonical and user forms compare equal", "[appservice]") {
  CHECK(quantities_equal("0.5", "500m"));
  CHECK(quantities_equal("1024Mi", "1Gi"));
  CHECK(quantities_equal("1000m", "1"));
  CHECK(quantities_equal("0.0001", "100u"));
  CHECK(quantities_equal("1e3", "1k"));
  CHECK_FALSE(quantities_equal("1", "2"));
  CHECK_FALSE(quantities_equal("1Gi", "1G"));
  CHECK_FALSE(quantities_equal("lots", "1"));
}
