#include "ctrl/managed_fields_upgrade.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>

namespace {

rapidjson::Document parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

std::string object_with(const std::string& managed_fields) {
  return R"({"metadata":{"name":"x","resourceVersion":"7","managedFields":)" + managed_fields +
         "}}";
}

}  // namespace

TEST_CASE("managed fields: a create-time Update entry becomes the Apply entry",
          "[ctrl][managedfields]") {
  auto object = parse(object_with(
      R"([{"manager":"appservice-operator","operation":"Update","apiVersion":"v1",)"
      R"("fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{},"f:b":{}}}},)"
      R"({"manager":"kubectl-edit","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1",)"
      R"("fieldsV1":{"f:data":{"f:c":{}}}}])"));
  auto patch = ctrl::upgrade_managed_fields_patch(object, "appservice-operator");
  REQUIRE(patch);
  auto p = parse(*patch);
  REQUIRE(p.Size() == 2);
  CHECK(std::string(p[0]["op"].GetString()) == "test");
  CHECK(std::string(p[0]["path"].GetString()) == "/metadata/resourceVersion");
  CHECK(std::string(p[0]["value"].GetString()) == "7");
  CHECK(std::string(p[1]["op"].GetString()) == "replace");
  const auto& entries = p[1]["value"];
  REQUIRE(entries.Size() == 2);
  CHECK(std::string(entries[0]["operation"].GetString()) == "Apply");
  CHECK(std::string(entries[0]["manager"].GetString()) == "appservice-operator");
  CHECK(entries[0]["fieldsV1"]["f:data"].HasMember("f:b"));
  // Another manager's entry is kept as it was.
  CHECK(std::string(entries[1]["manager"].GetString()) == "kubectl-edit");
  CHECK(std::string(entries[1]["operation"].GetString()) == "Update");
}

TEST_CASE("managed fields: Update entries are folded into an existing Apply entry",
          "[ctrl][managedfields]") {
  auto object = parse(object_with(
      R"([{"manager":"appservice-operator","operation":"Update","apiVersion":"apps/v1",)"
      R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{},"f:x":{"f:y":{}}}}},)"
      R"({"manager":"appservice-operator","operation":"Update","subresource":"status",)"
      R"("fieldsV1":{"f:status":{}}},)"
      R"({"manager":"appservice-operator","operation":"Apply","apiVersion":"apps/v1",)"
      R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:x":{"f:z":{}}}}}])"));
  auto patch = ctrl::upgrade_managed_fields_patch(object, "appservice-operator");
  REQUIRE(patch);
  auto p = parse(*patch);
  const auto& entries = p[1]["value"];
  REQUIRE(entries.Size() == 2);  // the status subresource entry stays
  CHECK(std::string(entries[0]["subresource"].GetString()) == "status");
  const auto& apply = entries[1];
  CHECK(std::string(apply["operation"].GetString()) == "Apply");
  CHECK(apply["fieldsV1"]["f:spec"].HasMember("f:replicas"));
  CHECK(apply["fieldsV1"]["f:spec"]["f:x"].HasMember("f:y"));
  CHECK(apply["fieldsV1"]["f:spec"]["f:x"].HasMember("f:z"));
}

TEST_CASE("managed fields: nothing to fold gives no patch", "[ctrl][managedfields]") {
  auto applied = parse(object_with(
      R"([{"manager":"appservice-operator","operation":"Apply","fieldsV1":{"f:data":{}}}])"));
  CHECK_FALSE(ctrl::upgrade_managed_fields_patch(applied, "appservice-operator"));
  auto other = parse(object_with(R"([{"manager":"helm","operation":"Update","fieldsV1":{}}])"));
  CHECK_FALSE(ctrl::upgrade_managed_fields_patch(other, "appservice-operator"));
  CHECK_FALSE(ctrl::upgrade_managed_fields_patch(parse(R"({"metadata":{}})"), "x"));
}
