// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/managed_fields_upgrade.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <catch2/catch.hpp>
#include <string>

#include "ctrl/object/object_meta.h"

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

TEST_CASE("managed fields: the upgrade decision reads only who wrote how",
          "[ctrl][managedfields]") {
  const std::string create =
      R"({"manager":"appservice-operator","operation":"Update","apiVersion":"v1",)"
      R"("fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}})";
  const std::string apply =
      R"({"manager":"appservice-operator","operation":"Apply","fieldsV1":{"f:data":{}}})";
  const std::string status =
      R"({"manager":"appservice-operator","operation":"Update","subresource":"status"})";
  const std::string other = R"({"manager":"kubectl-edit","operation":"Update"})";
  struct Row {
    std::string managed_fields;
    bool needs;
  };
  const Row rows[] = {
      {"[" + create + "]", true},
      {"[" + apply + "," + create + "]", true},
      {"[" + apply + "]", false},
      {"[" + apply + "," + status + "," + other + "]", false},
      {"[]", false},
  };
  for (const auto& row : rows) {
    INFO(row.managed_fields);
    auto whole = parse(object_with(row.managed_fields));
    // The decision agrees with whether there is something to fold, on the whole object and on
    // the summary a cache keeps.
    CHECK(ctrl::needs_managed_fields_upgrade(whole, "appservice-operator") == row.needs);
    CHECK(ctrl::upgrade_managed_fields_patch(whole, "appservice-operator").has_value() ==
          row.needs);
    ctrl::summarize_managed_fields(whole);
    CHECK(ctrl::needs_managed_fields_upgrade(whole, "appservice-operator") == row.needs);
  }
  CHECK_FALSE(ctrl::needs_managed_fields_upgrade(parse(R"({"metadata":{}})"), "x"));
  CHECK_FALSE(ctrl::needs_managed_fields_upgrade(parse(R"({"metadata":"junk"})"), "x"));
  CHECK_FALSE(
      ctrl::needs_managed_fields_upgrade(parse(R"({"metadata":{"managedFields":{}}})"), "x"));
}

TEST_CASE("managed fields: a summary keeps manager, operation and subresource only",
          "[ctrl][managedfields]") {
  auto object =
      parse(R"({"metadata":{"name":"x","managedFields":[)"
            R"({"manager":"appservice-operator","operation":"Update","apiVersion":"apps/v1",)"
            R"("time":"2024-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}},)"
            R"({"manager":"kcm","operation":"Update","subresource":"status","fieldsV1":{}},)"
            R"("not an entry"]},"spec":{"replicas":2}})");
  ctrl::summarize_managed_fields(object);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  object.Accept(writer);
  CHECK(std::string(buffer.GetString()) ==
        R"({"metadata":{"name":"x","managedFields":[)"
        R"({"manager":"appservice-operator","operation":"Update"},)"
        R"({"manager":"kcm","operation":"Update","subresource":"status"},)"
        R"("not an entry"]},"spec":{"replicas":2}})");

  auto junk = parse(R"({"metadata":{"managedFields":"junk"}})");
  ctrl::summarize_managed_fields(junk);
  CHECK_FALSE(junk["metadata"].HasMember("managedFields"));
  auto no_meta = parse(R"({"metadata":7})");
  ctrl::summarize_managed_fields(no_meta);  // no crash on malformed input
}
