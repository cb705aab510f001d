// SPDX-License-Identifier: Apache-2.0
#include "appservice/child_match.h"

#include <string_view>

#include "appservice/quantity.h"

namespace appservice {
namespace {

using rapidjson::Value;

// How to compare below a key: quantities by value; an atomic map or struct (the API server's
// x-kubernetes-map-type: atomic, which an apply replaces whole) exactly, so a key someone added is
// drift; everything else as a subset (granular: other managers' keys and items are theirs).
enum class Mode { plain, quantity_map, quantity, atomic };

std::string_view view(const Value& v) {
  return {v.GetString(), v.GetStringLength()};
}

Mode child_mode(std::string_view key, Mode parent) {
  if (parent == Mode::quantity_map) return Mode::quantity;
  if (parent == Mode::atomic) return Mode::atomic;
  // A Service's spec.selector (a map), a Deployment's spec.selector (a LabelSelector) and an env
  // var's configMapKeyRef and secretKeyRef are atomic. Of the others we set, none is: env, ports
  // and ownerReferences are lists keyed by name or number, labels and resources granular maps.
  // (fieldRef and resourceFieldRef are atomic too, but the API server defaults members we do not
  // send, so they stay subsets.)
  if (key == "selector" || key == "configMapKeyRef" || key == "secretKeyRef") return Mode::atomic;
  if (key == "limits" || key == "requests") return Mode::quantity_map;
  if (key == "divisor") return Mode::quantity;
  return Mode::plain;
}

bool subset(const Value& desired, const Value& actual, Mode mode) {
  if (mode == Mode::atomic) return desired == actual;
  if (desired.IsObject()) {
    if (!actual.IsObject()) return false;
    for (const auto& m : desired.GetObject()) {
      auto it = actual.FindMember(m.name);
      if (it == actual.MemberEnd()) return false;
      if (!subset(m.value, it->value, child_mode(view(m.name), mode))) return false;
    }
    return true;
  }
  if (desired.IsArray()) {
    // Every desired item must be somewhere in the live list: other managers may add items, and
    // items we no longer send are caught by the spec-hash annotation.
    if (!actual.IsArray()) return false;
    for (const Value& d : desired.GetArray()) {
      bool found = false;
      for (const Value& x : actual.GetArray()) {
        if (subset(d, x, mode)) {
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
    return true;
  }
  if (desired.IsString()) {
    if (mode == Mode::quantity && actual.IsString()) {
      return quantities_equal(view(desired), view(actual));
    }
    return actual.IsString() && view(desired) == view(actual);
  }
  if (desired.IsNumber()) {
    if (!actual.IsNumber()) return false;
    if (desired.IsDouble() || actual.IsDouble()) return desired.GetDouble() == actual.GetDouble();
    if (desired.IsInt64() && actual.IsInt64()) return desired.GetInt64() == actual.GetInt64();
    return desired.IsUint64() && actual.IsUint64() && desired.GetUint64() == actual.GetUint64();
  }
  return desired == actual;  // bool, null
}

// metadata and spec only: apiVersion/kind are absent from list items, status is not ours.
bool object_matches(const Value& desired, const Value& actual) {
  if (!desired.IsObject() || !actual.IsObject()) return false;
  for (const char* field : {"metadata", "spec"}) {
    auto d = desired.FindMember(field);
    if (d == desired.MemberEnd()) continue;
    auto a = actual.FindMember(field);
    if (a == actual.MemberEnd() || !subset(d->value, a->value, Mode::plain)) return false;
  }
  return true;
}

// subset's "no", explained: the path below `path` of the first desired field `actual` lacks. A
// list item no live item holds is looked into against the live item at its index, if any (one
// container, ports in order): the likeliest counterpart.
std::string mismatch(const Value& desired, const Value& actual, Mode mode,
                     const std::string& path) {
  if (subset(desired, actual, mode)) return {};
  if (mode == Mode::atomic || desired.IsObject() != actual.IsObject() ||
      desired.IsArray() != actual.IsArray()) {
    return path;
  }
  if (desired.IsObject()) {
    for (const auto& m : desired.GetObject()) {
      const std::string below = path + "." + std::string(view(m.name));
      auto it = actual.FindMember(m.name);
      if (it == actual.MemberEnd()) return below + " (absent)";
      const Mode child = child_mode(view(m.name), mode);
      if (!subset(m.value, it->value, child)) return mismatch(m.value, it->value, child, below);
    }
    return path;
  }
  if (desired.IsArray()) {
    const auto live = actual.GetArray();
    rapidjson::SizeType i = 0;
    for (const Value& d : desired.GetArray()) {
      const std::string below = path + "[" + std::to_string(i) + "]";
      bool found = false;
      for (const Value& x : live) found = found || subset(d, x, mode);
      if (!found) return i < live.Size() ? mismatch(d, live[i], mode, below) : below + " (absent)";
      ++i;
    }
  }
  return path;
}

}  // namespace

std::string child_difference(const rapidjson::Value& desired, const rapidjson::Value& actual) {
  if (!desired.IsObject() || !actual.IsObject()) return "the object";
  for (const char* field : {"metadata", "spec"}) {
    auto d = desired.FindMember(field);
    if (d == desired.MemberEnd()) continue;
    auto a = actual.FindMember(field);
    if (a == actual.MemberEnd()) return std::string(field) + " (absent)";
    std::string where = mismatch(d->value, a->value, Mode::plain, field);
    if (!where.empty()) return where;
  }
  return {};
}

bool deployment_matches(const rapidjson::Value& desired, const rapidjson::Value& actual) {
  return object_matches(desired, actual);
}

bool service_matches(const rapidjson::Value& desired, const rapidjson::Value& actual) {
  return object_matches(desired, actual);
}

}  // namespace appservice
