// SPDX-License-Identifier: Apache-2.0
#pragma once

// Public API (docs/library.md): objects as the caches hand them out (JSON documents, immutable and
// shared), their keys, what a cache change says, and null-safe readers for their fields.

#include <rapidjson/document.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace asop {

// An object as a cache hands it around: immutable once decoded, shared by the cache and every
// reader.
using ObjectPtr = std::shared_ptr<const rapidjson::Document>;

// Which object: namespace (empty for a cluster-scoped one) and name, controller-runtime's
// client.ObjectKey. Work-queue and cache keys are its text, "namespace/name" (key()).
struct ObjectKey {
  ObjectKey() = default;  // not an aggregate: GCC 12 co_await temporaries
  ObjectKey(std::string n, std::string nm) : ns(std::move(n)), name(std::move(nm)) {}

  std::string ns;
  std::string name;

  static ObjectKey from_key(const std::string& key);
  std::string key() const;
  bool operator==(const ObjectKey&) const = default;
};

// What a store operation changed, for event handlers.
struct StoreChange {
  enum class Type { added, updated, deleted };
  Type type = Type::added;
  ObjectPtr old_object;  // null for added
  ObjectPtr new_object;  // for deleted: the last state known
  // An add from the first full list (client-go's isInInitialList): the object existed before
  // this process looked, so it is queued at low priority behind changes seen live.
  bool in_initial_list = false;
};

// Read-only accessors for the metadata of any Kubernetes object in JSON. A missing or mistyped
// field reads as empty: objects come from the API server and are not trusted to be well formed.
std::string_view meta_string(const rapidjson::Value& object, const char* field);
std::string_view meta_namespace(const rapidjson::Value& object);
std::string_view meta_name(const rapidjson::Value& object);
std::string_view meta_uid(const rapidjson::Value& object);
std::string_view meta_resource_version(const rapidjson::Value& object);
// metadata.generation, 0 when missing: what status.observedGeneration and a condition's
// observedGeneration report.
std::int64_t meta_generation(const rapidjson::Value& object);
// metadata.labels[key]; empty when missing.
std::string_view meta_label(const rapidjson::Value& object, std::string_view key);
// metadata.deletionTimestamp is set: the object is being deleted (finalizers hold it).
bool meta_deleting(const rapidjson::Value& object);
// metadata.finalizers; other items skipped.
std::vector<std::string> meta_finalizers(const rapidjson::Value& object);
// The cache and work-queue key: "namespace/name", or "name" for cluster-scoped objects
// (client-go's MetaNamespaceKeyFunc).
std::string object_key(const rapidjson::Value& object);
std::string object_key(std::string_view ns, std::string_view name);

// The ownerReference with controller: true, if any.
struct OwnerRef {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
};
std::optional<OwnerRef> controller_owner(const rapidjson::Value& object);

// Null-safe reads of JSON objects from the API server: a missing member, a null object or a value
// of the wrong type reads as absent (null, "", 0, empty), never as an error or a crash.
namespace json {

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

}  // namespace json

}  // namespace asop
