// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/status_only_change.h"

#include <string_view>

namespace ctrl {
namespace {

bool ignored_top(std::string_view name) {
  return name == "status";
}
bool ignored_meta(std::string_view name) {
  return name == "resourceVersion" || name == "managedFields";
}

std::string_view name_of(const rapidjson::Value::ConstMemberIterator& m) {
  return {m->name.GetString(), m->name.GetStringLength()};
}

// Every member of `a` not ignored has an equal one in `b` (rapidjson's == compares deeply and
// regardless of member order), and `b` has no other member that is not ignored.
bool equal_except(const rapidjson::Value& a, const rapidjson::Value& b,
                  bool (*ignored)(std::string_view), bool metadata_level) {
  if (!a.IsObject() || !b.IsObject()) return a == b;
  auto count = [&](const rapidjson::Value& v) {
    int n = 0;
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) n += ignored(name_of(m)) ? 0 : 1;
    return n;
  };
  if (count(a) != count(b)) return false;
  for (auto m = a.MemberBegin(); m != a.MemberEnd(); ++m) {
    const auto name = name_of(m);
    if (ignored(name)) continue;
    auto other = b.FindMember(m->name);
    if (other == b.MemberEnd()) return false;
    if (!metadata_level && name == "metadata") {
      if (!equal_except(m->value, other->value, &ignored_meta, true)) return false;
    } else if (m->value != other->value) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool status_only_change(const rapidjson::Value& before, const rapidjson::Value& after) {
  return equal_except(before, after, &ignored_top, false);
}

}  // namespace ctrl
