// SPDX-License-Identifier: Apache-2.0
#pragma once

// Public API (docs/library.md): metav1.Condition with apimachinery's semantics
// (meta.SetStatusCondition): lastTransitionTime moves only when the status changes.

#include <rapidjson/document.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace asop {

// One metav1.Condition; times are RFC 3339 strings as the API server writes them.
// Every member has an initializer, so designated initializers may leave any out under -Wextra
// (GCC 12 warns about omitted members that have none).
struct Condition {
  std::string type{};
  std::string status{};  // "True", "False" or "Unknown"
  std::int64_t observed_generation = 0;
  std::string last_transition_time{};
  std::string reason{};
  std::string message{};
};

// apimachinery's meta.SetStatusCondition for one condition: `next` as it should be written, given
// the conditions the object has. Its lastTransitionTime stays the previous one of its type unless
// the status flips (or there was none): then it is `now`. So writing the result again is no
// change, and a status written only when it changed is not written on every pass.
Condition transitioned(Condition next, const std::vector<Condition>& previous,
                       std::string_view now);
// meta.SetStatusCondition on a list: adds or updates the condition of `next.type` (transitioned);
// returns whether anything changed.
bool set_status_condition(std::vector<Condition>& conditions, Condition next, std::string_view now);
// meta.FindStatusCondition: the condition of that type, or null.
const Condition* find_status_condition(const std::vector<Condition>& conditions,
                                       std::string_view type);

// Now as the API server writes times (RFC 3339, UTC, whole seconds): the `now` of the functions
// above.
std::string now_rfc3339();

// A status.conditions array (null or malformed: none; entries without a type are skipped).
std::vector<Condition> conditions_from_json(const rapidjson::Value* conditions);
rapidjson::Value condition_to_json(const Condition& condition,
                                   rapidjson::Document::AllocatorType& a);

}  // namespace asop
