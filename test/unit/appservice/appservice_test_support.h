// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "support/source_dir.h"

namespace appservice::testing {

inline std::string source_path(const std::string& relative) {
  return kube::testing::source_dir() + "/" + relative;
}

inline rapidjson::Document parse_json(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  if (doc.HasParseError()) throw std::runtime_error("bad JSON in test: " + text);
  return doc;
}

inline rapidjson::Document load_json(const std::string& relative) {
  std::ifstream in(source_path(relative));
  if (!in) throw std::runtime_error("cannot open " + relative);
  std::stringstream s;
  s << in.rdbuf();
  return parse_json(s.str());
}

inline std::string to_json(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return buffer.GetString();
}

// YAML to JSON the way the API server reads a manifest: plain scalars that look like integers or
// booleans are numbers and booleans, quoted ones stay strings.
inline rapidjson::Value yaml_to_json(const YAML::Node& node,
                                     rapidjson::Document::AllocatorType& a) {
  using rapidjson::Value;
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      Value v(rapidjson::kObjectType);
      for (const auto& kv : node) {
        v.AddMember(Value(kv.first.as<std::string>(), a), yaml_to_json(kv.second, a), a);
      }
      return v;
    }
    case YAML::NodeType::Sequence: {
      Value v(rapidjson::kArrayType);
      for (const auto& item : node) v.PushBack(yaml_to_json(item, a), a);
      return v;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() == "?") {
        if (s == "true" || s == "false") return Value(s == "true");
        if (!s.empty() && s.find_first_not_of("-0123456789") == std::string::npos && s != "-") {
          return Value(static_cast<std::int64_t>(std::stoll(s)));
        }
      }
      return Value(s, a);
    }
    default:
      return Value(rapidjson::kNullType);
  }
}

// A sample from deploy/samples as the API server would return it from namespace "demo".
inline rapidjson::Document load_sample(const std::string& file) {
  YAML::Node node = YAML::LoadFile(source_path("deploy/samples/" + file));
  rapidjson::Document doc;
  doc.SetObject();
  auto& a = doc.GetAllocator();
  rapidjson::Value v = yaml_to_json(node, a);
  static_cast<rapidjson::Value&>(doc).Swap(v);
  auto& meta = doc["metadata"];
  meta.AddMember("namespace", "demo", a);
  meta.AddMember("uid", "6f1c7d1e-0000-4000-8000-000000000001", a);
  meta.AddMember("resourceVersion", "42", a);
  meta.AddMember("generation", 3, a);
  return doc;
}

}  // namespace appservice::testing
