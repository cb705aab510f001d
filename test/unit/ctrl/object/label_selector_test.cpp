// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/label_selector.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>

using ctrl::LabelSelector;

namespace {

rapidjson::Document labelled(const std::string& labels) {
  rapidjson::Document d;
  d.Parse((R"({"metadata":{"name":"x","labels":)" + labels + "}}").c_str());
  return d;
}

bool selects(const std::string& selector, const std::string& labels) {
  auto parsed = LabelSelector::parse(selector);
  REQUIRE(parsed);
  return parsed->matches(labelled(labels));
}

}  // namespace

TEST_CASE("label selector: the terms of apimachinery's text form", "[label_selector]") {
  CHECK(selects("", "{}"));
  CHECK(selects("app.kubernetes.io/managed-by=op", R"({"app.kubernetes.io/managed-by":"op"})"));
  CHECK(selects("a==b", R"({"a":"b"})"));
  CHECK_FALSE(selects("a=b", R"({"a":"c"})"));
  CHECK_FALSE(selects("a=b", "{}"));
  CHECK(selects("a", R"({"a":""})"));
  CHECK_FALSE(selects("a", R"({"b":"x"})"));
  CHECK(selects("!a", R"({"b":"x"})"));
  CHECK_FALSE(selects("!a", R"({"a":"x"})"));
  // A missing label satisfies != and notin, as in apimachinery.
  CHECK(selects("a!=b", "{}"));
  CHECK_FALSE(selects("a!=b", R"({"a":"b"})"));
  CHECK(selects("shard in (x, y)", R"({"shard":"y"})"));
  CHECK_FALSE(selects("shard in (x,y)", R"({"shard":"z"})"));
  CHECK(selects("shard notin (x,y)", R"({"shard":"z"})"));
  CHECK(selects("a=b, shard in (x,y), !c", R"({"a":"b","shard":"x"})"));
  CHECK_FALSE(selects("a=b,shard in (x,y),!c", R"({"a":"b","shard":"x","c":"1"})"));
}

TEST_CASE("label selector: text it cannot read is refused, never guessed", "[label_selector]") {
  CHECK_FALSE(LabelSelector::parse("a in x"));
  CHECK_FALSE(LabelSelector::parse("a,,b"));
  CHECK_FALSE(LabelSelector::parse("=b"));
  CHECK_FALSE(LabelSelector::parse("a foo (x)"));
}

TEST_CASE("label selector: an object without labels", "[label_selector]") {
  rapidjson::Document d;
  d.Parse(R"({"metadata":{"name":"x"}})");
  CHECK(LabelSelector::parse("!a")->matches(d));
  CHECK_FALSE(LabelSelector::parse("a")->matches(d));
}
