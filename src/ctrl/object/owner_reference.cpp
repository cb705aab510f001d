// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/owner_reference.h"

#include <string_view>

#include "asop/kind.h"

namespace asop {
namespace {

std::string_view text(const rapidjson::Value& v, const char* field) {
  if (!v.IsObject()) return {};
  auto it = v.FindMember(field);
  if (it == v.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

rapidjson::Value string(std::string_view s, rapidjson::Document::AllocatorType& a) {
  return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

// The same owner, whatever the version: group, kind and name.
bool same_owner(const rapidjson::Value& ref, const OwnerRef& owner) {
  return group_of(text(ref, "apiVersion")) == group_of(owner.api_version) &&
         text(ref, "kind") == owner.kind && text(ref, "name") == owner.name;
}

}  // namespace

bool set_controller_reference(rapidjson::Value& object, const OwnerRef& owner,
                              rapidjson::Document::AllocatorType& a) {
  if (!object.IsObject()) return false;
  if (auto current = controller_owner(object);
      current && !(group_of(current->api_version) == group_of(owner.api_version) &&
                   current->kind == owner.kind && current->name == owner.name)) {
    return false;
  }
  if (!object.HasMember("metadata") || !object["metadata"].IsObject()) {
    object.RemoveMember("metadata");
    object.AddMember("metadata", rapidjson::Value(rapidjson::kObjectType), a);
  }
  auto& meta = object["metadata"];
  if (!meta.HasMember("ownerReferences") || !meta["ownerReferences"].IsArray()) {
    meta.RemoveMember("ownerReferences");
    meta.AddMember("ownerReferences", rapidjson::Value(rapidjson::kArrayType), a);
  }
  rapidjson::Value ref(rapidjson::kObjectType);
  ref.AddMember("apiVersion", string(owner.api_version, a), a);
  ref.AddMember("kind", string(owner.kind, a), a);
  ref.AddMember("name", string(owner.name, a), a);
  ref.AddMember("uid", string(owner.uid, a), a);
  ref.AddMember("controller", true, a);
  ref.AddMember("blockOwnerDeletion", true, a);
  auto& refs = meta["ownerReferences"];
  for (auto& existing : refs.GetArray()) {
    if (same_owner(existing, owner)) {
      existing = std::move(ref);
      return true;
    }
  }
  refs.PushBack(std::move(ref), a);
  return true;
}

OwnerRef owner_of(const Kind& kind, const rapidjson::Value& owner) {
  return OwnerRef{kind.api_version, kind.kind, std::string(meta_name(owner)),
                  std::string(meta_uid(owner))};
}

}  // namespace asop
