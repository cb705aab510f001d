// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/object_meta.h"

namespace asop {
namespace {

const rapidjson::Value* metadata(const rapidjson::Value& object) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember("metadata");
  if (it == object.MemberEnd() || !it->value.IsObject()) return nullptr;
  return &it->value;
}

std::string_view string_field(const rapidjson::Value& object, const char* field) {
  if (!object.IsObject()) return {};
  auto it = object.FindMember(field);
  if (it == object.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

}  // namespace

std::string_view meta_string(const rapidjson::Value& object, const char* field) {
  const auto* meta = metadata(object);
  return meta ? string_field(*meta, field) : std::string_view{};
}

std::string_view meta_namespace(const rapidjson::Value& object) {
  return meta_string(object, "namespace");
}
std::string_view meta_name(const rapidjson::Value& object) {
  return meta_string(object, "name");
}
std::string_view meta_uid(const rapidjson::Value& object) {
  return meta_string(object, "uid");
}
std::string_view meta_resource_version(const rapidjson::Value& object) {
  return meta_string(object, "resourceVersion");
}

std::int64_t meta_generation(const rapidjson::Value& object) {
  const auto* meta = metadata(object);
  if (meta == nullptr) return 0;
  auto it = meta->FindMember("generation");
  return it != meta->MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : 0;
}

std::string_view meta_label(const rapidjson::Value& object, std::string_view key) {
  const auto* meta = metadata(object);
  if (!meta) return {};
  auto labels = meta->FindMember("labels");
  if (labels == meta->MemberEnd() || !labels->value.IsObject()) return {};
  auto it = labels->value.FindMember(rapidjson::Value(
      rapidjson::StringRef(key.data(), static_cast<rapidjson::SizeType>(key.size()))));
  if (it == labels->value.MemberEnd() || !it->value.IsString()) return {};
  return std::string_view(it->value.GetString(), it->value.GetStringLength());
}

bool meta_deleting(const rapidjson::Value& object) {
  const auto* meta = metadata(object);
  if (!meta) return false;
  auto it = meta->FindMember("deletionTimestamp");
  return it != meta->MemberEnd() && !it->value.IsNull();
}

std::vector<std::string> meta_finalizers(const rapidjson::Value& object) {
  std::vector<std::string> out;
  const auto* meta = metadata(object);
  if (!meta) return out;
  auto it = meta->FindMember("finalizers");
  if (it == meta->MemberEnd() || !it->value.IsArray()) return out;
  for (const auto& f : it->value.GetArray()) {
    if (f.IsString()) out.emplace_back(f.GetString(), f.GetStringLength());
  }
  return out;
}

}  // namespace asop

namespace ctrl {

bool meta_deleted_by_write(const rapidjson::Value& written) {
  if (!meta_deleting(written) || !meta_finalizers(written).empty()) return false;
  const auto* meta = asop::metadata(written);
  auto grace = meta->FindMember("deletionGracePeriodSeconds");
  return grace == meta->MemberEnd() || grace->value.IsNull() ||
         (grace->value.IsInt64() && grace->value.GetInt64() == 0);
}

std::optional<std::uint64_t> resource_version_number(std::string_view resource_version) {
  // Digits only, no sign, no leading zero (a canonical decimal), at most 20 of them.
  if (resource_version.empty() || resource_version.size() > 20) return std::nullopt;
  if (resource_version.size() > 1 && resource_version.front() == '0') return std::nullopt;
  std::uint64_t value = 0;
  for (char c : resource_version) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;  // overflow
    value = value * 10 + digit;
  }
  return value;
}

}  // namespace ctrl

namespace asop {

ObjectKey ObjectKey::from_key(const std::string& key) {
  auto slash = key.find('/');
  if (slash == std::string::npos) return ObjectKey({}, key);
  return ObjectKey(key.substr(0, slash), key.substr(slash + 1));
}

std::string ObjectKey::key() const {
  return ns.empty() ? name : ns + "/" + name;
}

std::string object_key(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).append("/").append(name);
  return key;
}

std::string object_key(const rapidjson::Value& object) {
  return object_key(meta_namespace(object), meta_name(object));
}

std::optional<OwnerRef> controller_owner(const rapidjson::Value& object) {
  const auto* meta = metadata(object);
  if (!meta) return std::nullopt;
  auto refs = meta->FindMember("ownerReferences");
  if (refs == meta->MemberEnd() || !refs->value.IsArray()) return std::nullopt;
  for (const auto& ref : refs->value.GetArray()) {
    if (!ref.IsObject()) continue;
    auto controller = ref.FindMember("controller");
    if (controller == ref.MemberEnd() || !controller->value.IsBool() ||
        !controller->value.GetBool()) {
      continue;
    }
    return OwnerRef{std::string(string_field(ref, "apiVersion")),
                    std::string(string_field(ref, "kind")), std::string(string_field(ref, "name")),
                    std::string(string_field(ref, "uid"))};
  }
  return std::nullopt;
}

}  // namespace asop

namespace ctrl {

void strip_managed_fields(rapidjson::Value& object) {
  if (!object.IsObject()) return;
  auto meta = object.FindMember("metadata");
  if (meta != object.MemberEnd() && meta->value.IsObject())
    meta->value.RemoveMember("managedFields");
}

void summarize_managed_fields(rapidjson::Value& object) {
  if (!object.IsObject()) return;
  auto meta = object.FindMember("metadata");
  if (meta == object.MemberEnd() || !meta->value.IsObject()) return;
  auto entries = meta->value.FindMember("managedFields");
  if (entries == meta->value.MemberEnd()) return;
  if (!entries->value.IsArray()) {
    meta->value.RemoveMember("managedFields");
    return;
  }
  for (auto& entry : entries->value.GetArray()) {
    if (!entry.IsObject()) continue;
    for (auto m = entry.MemberBegin(); m != entry.MemberEnd();) {
      std::string_view name(m->name.GetString(), m->name.GetStringLength());
      if (name == "manager" || name == "operation" || name == "subresource") {
        ++m;
      } else {
        m = entry.EraseMember(m);
      }
    }
  }
}

}  // namespace ctrl
