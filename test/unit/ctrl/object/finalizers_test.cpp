// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/finalizers.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>

using ctrl::FinalizerStep;

namespace {

constexpr const char* kMine = "example.com/cleanup";

rapidjson::Document object(const std::string& metadata_extra) {
  rapidjson::Document d;
  d.Parse(
      (R"({"metadata":{"name":"a","namespace":"ns","resourceVersion":"42")" + metadata_extra + "}}")
          .c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

}  // namespace

TEST_CASE("finalizer step: the four states of (has it, being deleted)", "[finalizers]") {
  const std::string deleting = R"(,"deletionTimestamp":"2024-01-01T00:00:00Z")";
  CHECK(ctrl::finalizer_step(object(""), kMine) == FinalizerStep::add);
  CHECK(ctrl::finalizer_step(object(R"(,"finalizers":["other"])"), kMine) == FinalizerStep::add);
  CHECK(ctrl::finalizer_step(object(R"(,"finalizers":["example.com/cleanup"])"), kMine) ==
        FinalizerStep::apply);
  CHECK(ctrl::finalizer_step(object(R"(,"finalizers":["x","example.com/cleanup"])" + deleting),
                             kMine) == FinalizerStep::clean_up);
  // Another writer's finalizer holds it: not ours to touch.
  CHECK(ctrl::finalizer_step(object(R"(,"finalizers":["other"])" + deleting), kMine) ==
        FinalizerStep::nothing);
}

TEST_CASE("finalizer patches: add guarded by resourceVersion, remove guarded by the entry",
          "[finalizers]") {
  CHECK(ctrl::add_finalizer_patch(object(""), kMine) ==
        R"([{"op":"test","path":"/metadata/resourceVersion","value":"42"},)"
        R"({"op":"add","path":"/metadata/finalizers","value":["example.com/cleanup"]}])");
  CHECK(ctrl::add_finalizer_patch(object(R"(,"finalizers":["other"])"), kMine) ==
        R"([{"op":"test","path":"/metadata/resourceVersion","value":"42"},)"
        R"({"op":"add","path":"/metadata/finalizers/-","value":"example.com/cleanup"}])");
  CHECK_FALSE(ctrl::add_finalizer_patch(object(R"(,"finalizers":["example.com/cleanup"])"), kMine));

  // Only our entry, at the index the object shows: a list that moved fails the test op.
  CHECK(ctrl::remove_finalizer_patch(object(R"(,"finalizers":["other","example.com/cleanup"])"),
                                     kMine) ==
        R"([{"op":"test","path":"/metadata/finalizers/1","value":"example.com/cleanup"},)"
        R"({"op":"remove","path":"/metadata/finalizers/1"}])");
  CHECK_FALSE(ctrl::remove_finalizer_patch(object(R"(,"finalizers":["other"])"), kMine));
  CHECK_FALSE(ctrl::remove_finalizer_patch(object(""), kMine));
}

TEST_CASE("finalizer patches: names are JSON-escaped", "[finalizers]") {
  auto patch = ctrl::add_finalizer_patch(object(""), "a\"b");
  REQUIRE(patch);
  rapidjson::Document d;
  d.Parse(patch->c_str());
  REQUIRE_FALSE(d.HasParseError());
  CHECK(std::string(d[1]["value"][0].GetString()) == "a\"b");
}
