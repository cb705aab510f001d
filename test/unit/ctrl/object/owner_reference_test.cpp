// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/owner_reference.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <catch2/catch.hpp>
#include <string>

namespace {

rapidjson::Document parse(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

std::string text(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return buffer.GetString();
}

const ctrl::OwnerRef kOwner{"app.example.com/v1", "AppService", "web", "uid-1"};
const std::string kRef =
    R"({"apiVersion":"app.example.com/v1","kind":"AppService","name":"web","uid":"uid-1",)"
    R"("controller":true,"blockOwnerDeletion":true})";

}  // namespace

TEST_CASE("set_controller_reference: the owner as controller, blocking its deletion",
          "[owner_reference]") {
  auto d = parse(R"({"metadata":{"name":"web"}})");
  REQUIRE(ctrl::set_controller_reference(d, kOwner, d.GetAllocator()));
  CHECK(text(d) == R"({"metadata":{"name":"web","ownerReferences":[)" + kRef + "]}}");

  // No metadata yet: made.
  auto bare = parse("{}");
  REQUIRE(ctrl::set_controller_reference(bare, kOwner, bare.GetAllocator()));
  CHECK(text(bare) == R"({"metadata":{"ownerReferences":[)" + kRef + "]}}");
}

TEST_CASE("set_controller_reference: other references stay, the owner's own is replaced",
          "[owner_reference]") {
  auto d = parse(
      R"({"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"u"},)"
      R"({"apiVersion":"app.example.com/v1beta1","kind":"AppService","name":"web","uid":"old"}]}})");
  REQUIRE(ctrl::set_controller_reference(d, kOwner, d.GetAllocator()));
  CHECK(text(d["metadata"]["ownerReferences"]) ==
        R"([{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"u"},)" + kRef + "]");
}

TEST_CASE("set_controller_reference: an object with another controller is left alone",
          "[owner_reference]") {
  const std::string json =
      R"({"metadata":{"ownerReferences":[{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout",)"
      R"("name":"web","uid":"r","controller":true}]}})";
  auto d = parse(json);
  CHECK_FALSE(ctrl::set_controller_reference(d, kOwner, d.GetAllocator()));
  CHECK(text(d) == text(parse(json)));
}

TEST_CASE("owner_of: the owner's kind from the caller, name and uid from the object, generation",
          "[owner_reference]") {
  rapidjson::Document owner;
  owner.Parse(R"({"metadata":{"namespace":"ns","name":"web","uid":"u-1","generation":7}})");
  const asop::Kind kind("app.example.com/v1", "AppService", "appservices");
  const auto ref = asop::owner_of(kind, owner);
  CHECK(ref.api_version == "app.example.com/v1");
  CHECK(ref.kind == "AppService");
  CHECK(ref.name == "web");
  CHECK(ref.uid == "u-1");
  CHECK(asop::meta_generation(owner) == 7);
  rapidjson::Document bare;
  bare.Parse(R"({"metadata":{"name":"x"}})");
  CHECK(asop::meta_generation(bare) == 0);
}
