// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// Null-safe reads of JSON objects from the API server: a missing member, a null object or a value
// of the wrong type reads as absent (null, "", 0, empty), never as an error or a crash.
namespace kube::json {

inline const rapidjson::Value* member(const rapidjson::Value* object, const char* name) {
  if (!object || !object->IsObject()) return nullptr;
  auto it = object->FindMember(name);
  return it == object->MemberEnd() ? nullptr : &it->value;
}

// A view into the document: valid as long as it is.
inline std::string_view string_view(const rapidjson::Value* v) {
  return v && v->IsString() ? std::string_view(v->GetString(), v->GetStringLength())
                            : std::string_view();
}

inline std::string text(const rapidjson::Value* v) {
  return std::string(string_view(v));
}

inline std::int64_t integer(const rapidjson::Value* v) {
  return v && v->IsInt64() ? v->GetInt64() : 0;
}

inline bool boolean(const rapidjson::Value* v) {
  return v && v->IsBool() && v->GetBool();
}

// The strings of an array; other items skipped.
inline std::vector<std::string> strings(const rapidjson::Value* v) {
  std::vector<std::string> out;
  if (!v || !v->IsArray()) return out;
  for (const auto& s : v->GetArray()) {
    if (s.IsString()) out.emplace_back(s.GetString(), s.GetStringLength());
  }
  return out;
}

}  // namespace kube::json
