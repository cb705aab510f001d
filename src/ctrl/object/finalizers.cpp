// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/finalizers.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "ctrl/object/object_meta.h"

namespace asop {
namespace {

std::string json_string(std::string_view s) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return buffer.GetString();
}

bool has_finalizer_list(const rapidjson::Value& object) {
  if (!object.IsObject()) return false;
  auto metadata = object.FindMember("metadata");
  if (metadata == object.MemberEnd() || !metadata->value.IsObject()) return false;
  auto finalizers = metadata->value.FindMember("finalizers");
  return finalizers != metadata->value.MemberEnd() && finalizers->value.IsArray();
}

// The index of `finalizer` in metadata.finalizers as the server stores the list, or -1.
int finalizer_index(const rapidjson::Value& object, std::string_view finalizer) {
  if (!has_finalizer_list(object)) return -1;
  const auto& list = object["metadata"]["finalizers"];
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
    if (list[i].IsString() &&
        std::string_view(list[i].GetString(), list[i].GetStringLength()) == finalizer) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace

FinalizerStep finalizer_step(const rapidjson::Value& object, std::string_view finalizer) {
  const bool has = finalizer_index(object, finalizer) >= 0;
  if (meta_deleting(object)) return has ? FinalizerStep::clean_up : FinalizerStep::nothing;
  return has ? FinalizerStep::apply : FinalizerStep::add;
}

}  // namespace asop

namespace ctrl {

std::optional<std::string> add_finalizer_patch(const rapidjson::Value& object,
                                               std::string_view finalizer) {
  if (asop::finalizer_index(object, finalizer) >= 0) return std::nullopt;
  std::string patch = R"([{"op":"test","path":"/metadata/resourceVersion","value":)" +
                      asop::json_string(meta_resource_version(object)) + "},";
  if (asop::has_finalizer_list(object)) {
    patch += R"({"op":"add","path":"/metadata/finalizers/-","value":)" +
             asop::json_string(finalizer) + "}]";
  } else {
    patch += R"({"op":"add","path":"/metadata/finalizers","value":[)" +
             asop::json_string(finalizer) + "]}]";
  }
  return patch;
}

std::optional<std::string> remove_finalizer_patch(const rapidjson::Value& object,
                                                  std::string_view finalizer) {
  const int index = asop::finalizer_index(object, finalizer);
  if (index < 0) return std::nullopt;
  const std::string at = "/metadata/finalizers/" + std::to_string(index);
  return R"([{"op":"test","path":")" + at + R"(","value":)" + asop::json_string(finalizer) +
         R"(},{"op":"remove","path":")" + at + "\"}]";
}

}  // namespace ctrl
