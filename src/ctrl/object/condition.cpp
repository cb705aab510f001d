// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/condition.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <utility>

namespace asop {
namespace {

std::string text(const rapidjson::Value& v, const char* field) {
  auto it = v.FindMember(field);
  if (it == v.MemberEnd() || !it->value.IsString()) return {};
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

rapidjson::Value str(std::string_view s, rapidjson::Document::AllocatorType& a) {
  return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

bool same(const Condition& x, const Condition& y) {
  return x.type == y.type && x.status == y.status &&
         x.observed_generation == y.observed_generation &&
         x.last_transition_time == y.last_transition_time && x.reason == y.reason &&
         x.message == y.message;
}

}  // namespace

const Condition* find_status_condition(const std::vector<Condition>& conditions,
                                       std::string_view type) {
  auto it = std::find_if(conditions.begin(), conditions.end(),
                         [&](const Condition& c) { return c.type == type; });
  return it == conditions.end() ? nullptr : &*it;
}

Condition transitioned(Condition next, const std::vector<Condition>& previous,
                       std::string_view now) {
  const Condition* prev = find_status_condition(previous, next.type);
  if (prev && prev->status == next.status && !prev->last_transition_time.empty()) {
    next.last_transition_time = prev->last_transition_time;
  } else {
    next.last_transition_time = std::string(now);
  }
  return next;
}

bool set_status_condition(std::vector<Condition>& conditions, Condition next,
                          std::string_view now) {
  Condition written = transitioned(std::move(next), conditions, now);
  auto it = std::find_if(conditions.begin(), conditions.end(),
                         [&](const Condition& c) { return c.type == written.type; });
  if (it == conditions.end()) {
    conditions.push_back(std::move(written));
    return true;
  }
  if (same(*it, written)) return false;
  *it = std::move(written);
  return true;
}

std::vector<Condition> conditions_from_json(const rapidjson::Value* conditions) {
  std::vector<Condition> out;
  if (!conditions || !conditions->IsArray()) return out;
  for (const auto& v : conditions->GetArray()) {
    if (!v.IsObject() || text(v, "type").empty()) continue;
    Condition c;
    c.type = text(v, "type");
    c.status = text(v, "status");
    auto generation = v.FindMember("observedGeneration");
    if (generation != v.MemberEnd() && generation->value.IsInt64()) {
      c.observed_generation = generation->value.GetInt64();
    }
    c.last_transition_time = text(v, "lastTransitionTime");
    c.reason = text(v, "reason");
    c.message = text(v, "message");
    out.push_back(std::move(c));
  }
  return out;
}

rapidjson::Value condition_to_json(const Condition& c, rapidjson::Document::AllocatorType& a) {
  rapidjson::Value v(rapidjson::kObjectType);
  v.AddMember("type", str(c.type, a), a);
  v.AddMember("status", str(c.status, a), a);
  v.AddMember("observedGeneration", rapidjson::Value(c.observed_generation), a);
  v.AddMember("lastTransitionTime", str(c.last_transition_time, a), a);
  v.AddMember("reason", str(c.reason, a), a);
  v.AddMember("message", str(c.message, a), a);
  return v;
}

std::string now_rfc3339() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(text, n);
}

}  // namespace asop
