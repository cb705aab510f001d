// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/status_only_change.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>

namespace {

rapidjson::Document parse(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

const char* kBefore = R"({"apiVersion":"v1","kind":"X","metadata":{"name":"a","resourceVersion":"1",
  "generation":3,"managedFields":[{"manager":"m"}],"labels":{"l":"1"},"finalizers":["f"]},
  "spec":{"size":1,"ports":[{"port":80}]},"status":{"observedGeneration":2}})";

}  // namespace

TEST_CASE("status_only_change: status, resourceVersion and managedFields do not count",
          "[status_only_change]") {
  auto before = parse(kBefore);
  CHECK(ctrl::status_only_change(before, before));
  // Member order does not matter.
  CHECK(ctrl::status_only_change(
      before,
      parse(R"({"status":{"observedGeneration":3,"conditions":[]},"spec":{"ports":[{"port":80}],
    "size":1},"metadata":{"finalizers":["f"],"labels":{"l":"1"},"generation":3,"resourceVersion":"9",
    "name":"a"},"kind":"X","apiVersion":"v1"})")));
  // Status removed entirely.
  CHECK(ctrl::status_only_change(
      before, parse(R"({"apiVersion":"v1","kind":"X","metadata":{"name":"a","resourceVersion":"2",
    "generation":3,"labels":{"l":"1"},"finalizers":["f"]},"spec":{"size":1,"ports":[{"port":80}]}})")));
}

TEST_CASE("status_only_change: spec and the metadata a reconciler acts on count",
          "[status_only_change]") {
  auto before = parse(kBefore);
  auto changed = [&](const char* path, const char* json_value) {
    auto after = parse(kBefore);
    rapidjson::Document value;
    value.Parse(json_value);
    std::string p = path;
    auto& parent = p.starts_with("spec.") ? after["spec"] : after["metadata"];
    const std::string member = p.substr(p.find('.') + 1);
    if (parent.HasMember(member.c_str())) parent.RemoveMember(member.c_str());
    parent.AddMember(rapidjson::Value(member.c_str(), after.GetAllocator()),
                     rapidjson::Value(value, after.GetAllocator()), after.GetAllocator());
    return !ctrl::status_only_change(before, after);
  };
  CHECK(changed("spec.size", "2"));
  CHECK(changed("spec.ports", R"([{"port":81}])"));
  CHECK(changed("metadata.generation", "4"));
  CHECK(changed("metadata.finalizers", "[]"));
  CHECK(changed("metadata.deletionTimestamp", R"("2026-01-01T00:00:00Z")"));
  CHECK(changed("metadata.labels", R"({"l":"2"})"));
  CHECK(changed("metadata.annotations", R"({"a":"b"})"));
  // A new top-level member.
  auto after = parse(kBefore);
  after.AddMember("extra", 1, after.GetAllocator());
  CHECK_FALSE(ctrl::status_only_change(before, after));
}
