// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/field_mask.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace {

std::string masked(const ctrl::FieldMask& mask, const char* json) {
  rapidjson::Document doc;
  doc.Parse(json);
  REQUIRE_FALSE(doc.HasParseError());
  mask.apply(doc);
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  doc.Accept(writer);
  return out.GetString();
}

}  // namespace

TEST_CASE("field mask: keeps listed paths whole and removes the rest", "[field_mask]") {
  const ctrl::FieldMask mask({{"a"}, {"b", "c"}, {"b", "x/y.z"}});
  CHECK(masked(mask, R"({"a":{"deep":[1,2]},"b":{"c":1,"d":2,"x/y.z":3},"e":4})") ==
        R"({"a":{"deep":[1,2]},"b":{"c":1,"x/y.z":3}})");
}

TEST_CASE("field mask: a path through a list applies to each item", "[field_mask]") {
  const ctrl::FieldMask mask({{"items", "name"}, {"items", "ports"}});
  CHECK(masked(mask, R"({"items":[{"name":"a","skip":1,"ports":[{"p":1}]},{"skip":2},3]})") ==
        R"({"items":[{"name":"a","ports":[{"p":1}]},{},3]})");
}

TEST_CASE("field mask: a scalar where an object was expected is kept as it is", "[field_mask]") {
  const ctrl::FieldMask mask(std::vector<ctrl::FieldMask::Path>{{"meta", "name"}});
  CHECK(masked(mask, R"({"meta":null})") == R"({"meta":null})");
  CHECK(masked(mask, R"({"meta":"text"})") == R"({"meta":"text"})");
  CHECK(masked(mask, R"([{"meta":{"name":1,"x":2}}])") == R"([{"meta":{"name":1}}])");
}

TEST_CASE("field mask: no paths keep nothing of an object", "[field_mask]") {
  const ctrl::FieldMask mask({});
  CHECK(masked(mask, R"({"a":1})") == "{}");
}
