// SPDX-License-Identifier: Apache-2.0
// The C++ parser and the CRD schema cannot drift apart: every field the parser reads is in
// crds/ with the same type, every spec field of the schema is read (or deliberately ignored),
// defaults, enums and ranges agree, and the status we write fits the status schema.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>

#include "appservice/app_service.h"
#include "appservice/conditions.h"
#include "appservice/spec_parser.h"
#include "appservice_test_support.h"

using namespace appservice;
using appservice::testing::parse_json;
using appservice::testing::source_path;

namespace {

// Schema fields under spec that the parser does not read, each with the reason. Empty today:
// every field of the schema reaches the Deployment or the Service.
const std::map<std::string, std::string> kIgnoredSpecFields = {};

YAML::Node load_schema() {
  YAML::Node crd = YAML::LoadFile(source_path("crds/app.example.com_appservices.yaml"));
  REQUIRE(crd["spec"]["names"]["kind"].as<std::string>() == "AppService");
  YAML::Node versions = crd["spec"]["versions"];
  REQUIRE(versions.size() == 1);
  REQUIRE(versions[0]["name"].as<std::string>() == "v1");
  return versions[0]["schema"]["openAPIV3Schema"];
}

// Flattens a schema into leaf paths ("spec.ports[].port", "spec.resources.limits.*") -> type.
void walk(const YAML::Node& node, const std::string& path,
          std::map<std::string, std::string>& out) {
  if (node["x-kubernetes-int-or-string"] && node["x-kubernetes-int-or-string"].as<bool>()) {
    out[path] = "int-or-string";
    return;
  }
  std::string type = node["type"] ? node["type"].as<std::string>() : "";
  if (type == "array") {
    walk(node["items"], path + "[]", out);
  } else if (type == "object" && node["properties"]) {
    for (const auto& p : node["properties"]) {
      std::string name = p.first.as<std::string>();
      walk(p.second, path.empty() ? name : path + "." + name, out);
    }
  } else if (type == "object" && node["additionalProperties"]) {
    walk(node["additionalProperties"], path + ".*", out);
  } else {
    out[path] = type;
  }
}

std::map<std::string, std::string> schema_fields() {
  std::map<std::string, std::string> out;
  walk(load_schema(), "", out);
  return out;
}

YAML::Node spec_property(const std::string& name) {
  return load_schema()["properties"]["spec"]["properties"][name];
}

bool valid(const std::string& spec) {
  return parse_app_service(parse_json(R"({"metadata":{"name":"x"},"spec":)" + spec + "}")).valid();
}

}  // namespace

TEST_CASE("crd: every field the parser reads is in the schema with the same type", "[appservice]") {
  auto schema = schema_fields();
  REQUIRE(schema.size() > 20);
  for (const FieldUse& use : parsed_fields()) {
    INFO("parser reads " << use.path);
    auto it = schema.find(std::string(use.path));
    REQUIRE(it != schema.end());
    CHECK(it->second == to_string(use.type));
  }
}

TEST_CASE("crd: every spec field of the schema is read or deliberately ignored", "[appservice]") {
  std::set<std::string> read;
  for (const FieldUse& use : parsed_fields()) read.emplace(use.path);
  auto schema = schema_fields();
  int spec_fields = 0;
  for (const auto& [path, type] : schema) {
    if (!path.starts_with("spec.")) continue;
    ++spec_fields;
    INFO("schema field " << path << " (" << type << ")");
    CHECK((read.count(path) == 1 || kIgnoredSpecFields.count(path) == 1));
  }
  CHECK(spec_fields == static_cast<int>(parsed_fields().size() + kIgnoredSpecFields.size()));
  for (const auto& [path, reason] : kIgnoredSpecFields) {
    INFO("ignored field " << path << " is no longer in the schema");
    CHECK(schema.count(path) == 1);
  }
}

TEST_CASE("crd: defaults and enums agree with the parser", "[appservice]") {
  CHECK(spec_property("size")["default"].as<int>() == AppServiceSpec{}.size);
  YAML::Node port = spec_property("ports")["items"]["properties"];
  CHECK(port["protocol"]["default"].as<std::string>() == to_string(ServicePort{}.protocol));
  for (const auto& value : port["protocol"]["enum"]) {
    CHECK(protocol_from_string(value.as<std::string>()));
  }
  std::set<std::string> types;
  for (const auto& value : spec_property("serviceType")["enum"]) {
    types.insert(value.as<std::string>());
    CHECK(service_type_from_string(value.as<std::string>()));
  }
  CHECK(types == std::set<std::string>{"ClusterIP", "NodePort", "LoadBalancer"});
  CHECK(spec_property("image")["minLength"].as<int>() == 1);
  YAML::Node required = load_schema()["properties"]["spec"]["required"];
  REQUIRE(required.size() == 1);
  CHECK(required[0].as<std::string>() == "image");
}

TEST_CASE("crd: numeric ranges agree with the parser", "[appservice]") {
  auto check_range = [](const YAML::Node& field, const std::string& make_prefix,
                        const std::string& make_suffix) {
    long long min = field["minimum"].as<long long>(), max = field["maximum"].as<long long>();
    auto spec = [&](long long v) { return make_prefix + std::to_string(v) + make_suffix; };
    INFO("range " << min << ".." << max << " for " << spec(0));
    CHECK(valid(spec(min)));
    CHECK(valid(spec(max)));
    CHECK_FALSE(valid(spec(min - 1)));
    CHECK_FALSE(valid(spec(max + 1)));
  };
  check_range(spec_property("size"), R"({"image":"a","size":)", "}");
  YAML::Node port = spec_property("ports")["items"]["properties"];
  check_range(port["port"], R"({"image":"a","ports":[{"port":)", "}]}");
  check_range(port["nodePort"], R"({"image":"a","ports":[{"port":80,"nodePort":)", "}]}");
}

TEST_CASE("crd: the status we write fits the status schema", "[appservice]") {
  AppService app;
  app.name = "x";
  app.generation = 2;
  StatusInputs in(app, "2024-05-01T10:00:00Z");
  auto status = status_to_json(compute_status(in));
  auto schema = schema_fields();
  auto type_of = [](const rapidjson::Value& v) -> std::string {
    if (v.IsString()) return "string";
    if (v.IsInt64()) return "integer";
    if (v.IsBool()) return "boolean";
    return "other";
  };
  for (const auto& m : status.GetObject()) {
    std::string path = std::string("status.") + m.name.GetString();
    if (m.value.IsArray()) {
      for (const auto& c : m.value.GetArray()) {
        for (const auto& f : c.GetObject()) {
          std::string field = path + "[]." + f.name.GetString();
          INFO(field);
          REQUIRE(schema.count(field) == 1);
          CHECK(schema[field] == type_of(f.value));
        }
      }
      continue;
    }
    INFO(path);
    REQUIRE(schema.count(path) == 1);
    CHECK(schema[path] == type_of(m.value));
  }
}
