// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/field_mask.h"

namespace ctrl {

FieldMask::FieldMask(const std::vector<Path>& paths) {
  for (const Path& path : paths) {
    Node* node = &root_;
    for (std::string_view name : path) node = &node->children[std::string(name)];
    node->whole = true;
  }
}

void FieldMask::apply(rapidjson::Value& value) const {
  apply(root_, value);
}

void FieldMask::apply(const Node& node, rapidjson::Value& value) {
  if (node.whole) return;
  if (value.IsArray()) {
    for (auto& item : value.GetArray()) apply(node, item);
    return;
  }
  if (!value.IsObject()) return;
  for (auto m = value.MemberBegin(); m != value.MemberEnd();) {
    auto child =
        node.children.find(std::string_view(m->name.GetString(), m->name.GetStringLength()));
    if (child == node.children.end()) {
      m = value.EraseMember(m);
    } else {
      apply(child->second, m->value);
      ++m;
    }
  }
}

}  // namespace ctrl
