// SPDX-License-Identifier: Apache-2.0
#include "kube/api/list_split.h"

#include <catch2/catch.hpp>
#include <string>

using kube::split_list;

TEST_CASE("split_list: the list's own fields and each item's exact text", "[list_split]") {
  const std::string body =
      R"({"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"resourceVersion":"42",)"
      R"("continue":"tok"},"items":[{"metadata":{"name":"a","resourceVersion":"7"},)"
      R"("spec":{"s":"}{\"[","l":[{"x":1},[2]]}},null,3,{"metadata":{"name":"b"}}]})";
  auto list = split_list(body, "list deployments");
  REQUIRE(list);
  CHECK(list->kind == "DeploymentList");
  CHECK(list->api_version == "apps/v1");
  CHECK(list->resource_version == "42");  // not the item's "7"
  CHECK(list->continue_token == "tok");
  REQUIRE(list->items.size() == 2);  // null and 3 are not objects
  CHECK(
      list->items[0] ==
      R"({"metadata":{"name":"a","resourceVersion":"7"},"spec":{"s":"}{\"[","l":[{"x":1},[2]]}})");
  CHECK(list->items[1] == R"({"metadata":{"name":"b"}})");
}

TEST_CASE("split_list: fields in any order, with whitespace, items first", "[list_split]") {
  const std::string body =
      " {\n \"items\" : [ {\"a\" : {}} , { } ],\n \"metadata\" : { "
      "\"continue\" : \"\" , \"resourceVersion\" : \"9\" },\n \"kind\":\"L\"}\n";
  auto list = split_list(body, "list x");
  REQUIRE(list);
  CHECK(list->kind == "L");
  CHECK(list->api_version.empty());
  CHECK(list->resource_version == "9");
  CHECK(list->continue_token.empty());
  REQUIRE(list->items.size() == 2);
  CHECK(list->items[0] == R"({"a" : {}})");
  CHECK(list->items[1] == "{ }");
}

TEST_CASE("split_list: keys named like the list's fields elsewhere are not taken", "[list_split]") {
  auto list = split_list(
      R"({"other":{"kind":"no","metadata":{"resourceVersion":"no"}},"items":[],"kind":"K"})", "x");
  REQUIRE(list);
  CHECK(list->kind == "K");
  CHECK(list->resource_version.empty());
  CHECK(list->items.empty());
}

TEST_CASE("split_list: what is not a JSON list is an error that says where", "[list_split]") {
  for (const char* bad : {"", "   ", "[1,2]", "\"text\"", "{\"items\":[{\"a\":1}", "{\"a\":1} x",
                          "<html>", "{\"items\":[{\"a\":tru}]}"}) {
    INFO(bad);
    auto list = split_list(bad, "list deployments");
    REQUIRE_FALSE(list);
    CHECK(list.error().message.find("list deployments: response is not a JSON list") == 0);
  }
  auto truncated = split_list("{\"items\":[{\"a\":1}", "x");
  REQUIRE_FALSE(truncated);
  CHECK(truncated.error().message.find("at offset") != std::string::npos);
}

TEST_CASE("split_list: deep nesting is an error or a value, never a crash", "[list_split]") {
  const std::string deep = "{\"items\":[{\"a\":" + std::string(200000, '[') + "]}]}";
  auto list = split_list(deep, "x");
  CHECK_FALSE(list);  // unbalanced: an error after one pass, on the heap
  const std::string balanced =
      "{\"items\":[{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}]}";
  auto ok = split_list(balanced, "x");
  REQUIRE(ok);
  CHECK(ok->items.size() == 1);
}
