// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/managed_fields_upgrade.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <vector>

#include "ctrl/object/object_meta.h"

namespace ctrl {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

bool string_is(const Value& entry, const char* field, std::string_view want) {
  auto it = entry.FindMember(field);
  if (it == entry.MemberEnd() || !it->value.IsString()) return want.empty();
  return std::string_view(it->value.GetString(), it->value.GetStringLength()) == want;
}

bool main_resource_entry(const Value& entry, std::string_view manager, std::string_view operation) {
  return entry.IsObject() && string_is(entry, "manager", manager) &&
         string_is(entry, "operation", operation) && string_is(entry, "subresource", "");
}

// FieldsV1 is a trie of objects ("f:spec": {"f:replicas": {}}, ".": {} marks a set leaf): the
// union of two sets is the recursive union of their members.
void union_into(Value& into, const Value& from, Allocator& a) {
  if (!into.IsObject() || !from.IsObject()) return;
  for (const auto& m : from.GetObject()) {
    auto it = into.FindMember(m.name);
    if (it == into.MemberEnd()) {
      into.AddMember(Value(m.name, a), Value(m.value, a), a);
    } else {
      union_into(it->value, m.value, a);
    }
  }
}

Value& fields_of(Value& entry, Allocator& a) {
  auto it = entry.FindMember("fieldsV1");
  if (it == entry.MemberEnd() || !it->value.IsObject()) {
    entry.RemoveMember("fieldsV1");
    entry.AddMember("fieldsV1", Value(rapidjson::kObjectType), a);
    it = entry.FindMember("fieldsV1");
  }
  return it->value;
}

const Value* managed_fields(const Value& object) {
  if (!object.IsObject()) return nullptr;
  auto meta = object.FindMember("metadata");
  if (meta == object.MemberEnd() || !meta->value.IsObject()) return nullptr;
  auto mf = meta->value.FindMember("managedFields");
  if (mf == meta->value.MemberEnd() || !mf->value.IsArray()) return nullptr;
  return &mf->value;
}

}  // namespace

bool needs_managed_fields_upgrade(const rapidjson::Value& object, std::string_view manager) {
  const Value* entries = managed_fields(object);
  if (!entries) return false;
  for (const auto& entry : entries->GetArray()) {
    if (main_resource_entry(entry, manager, "Update")) return true;
  }
  return false;
}

std::optional<std::string> upgrade_managed_fields_patch(const rapidjson::Value& object,
                                                        std::string_view manager) {
  const Value* mf = managed_fields(object);
  if (!mf) return std::nullopt;

  rapidjson::Document doc;
  auto& a = doc.GetAllocator();
  Value entries(*mf, a);
  std::vector<rapidjson::SizeType> updates;
  std::optional<rapidjson::SizeType> apply;
  for (rapidjson::SizeType i = 0; i < entries.Size(); ++i) {
    if (main_resource_entry(entries[i], manager, "Update")) updates.push_back(i);
    if (!apply && main_resource_entry(entries[i], manager, "Apply")) apply = i;
  }
  if (updates.empty()) return std::nullopt;

  // The entry that keeps the union: the Apply entry, else the first Update entry turned into one.
  rapidjson::SizeType keep = apply ? *apply : updates.front();
  Value& kept = entries[keep];
  // Member edits first: RemoveMember moves members, so no reference into `kept` survives them.
  kept.RemoveMember("operation");
  kept.AddMember("operation", "Apply", a);
  kept.RemoveMember("fieldsType");
  kept.AddMember("fieldsType", "FieldsV1", a);
  Value& fields = fields_of(kept, a);
  for (auto i : updates) {
    if (i == keep) continue;
    auto it = entries[i].FindMember("fieldsV1");
    if (it != entries[i].MemberEnd()) union_into(fields, it->value, a);
  }

  Value merged(rapidjson::kArrayType);
  for (rapidjson::SizeType i = 0; i < entries.Size(); ++i) {
    bool folded = i != keep && std::find(updates.begin(), updates.end(), i) != updates.end();
    if (!folded) merged.PushBack(Value(entries[i], a), a);
  }

  Value patch(rapidjson::kArrayType);
  Value test(rapidjson::kObjectType);
  test.AddMember("op", "test", a);
  test.AddMember("path", "/metadata/resourceVersion", a);
  auto rv = meta_resource_version(object);
  test.AddMember("value", Value(rv.data(), static_cast<rapidjson::SizeType>(rv.size()), a), a);
  patch.PushBack(std::move(test), a);
  Value replace(rapidjson::kObjectType);
  replace.AddMember("op", "replace", a);
  replace.AddMember("path", "/metadata/managedFields", a);
  replace.AddMember("value", std::move(merged), a);
  patch.PushBack(std::move(replace), a);

  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  patch.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace ctrl
