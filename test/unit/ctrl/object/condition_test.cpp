// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/condition.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using ctrl::Condition;

namespace {

Condition ready(const std::string& status, const std::string& reason, std::int64_t generation = 1) {
  Condition c;
  c.type = "Ready";
  c.status = status;
  c.reason = reason;
  c.message = reason + " message";
  c.observed_generation = generation;
  return c;
}

}  // namespace

TEST_CASE("ctrl condition: lastTransitionTime moves only when the status flips", "[condition]") {
  std::vector<Condition> conditions;
  CHECK(ctrl::set_status_condition(conditions, ready("False", "Waiting"), "t1"));
  REQUIRE(conditions.size() == 1);
  CHECK(conditions[0].last_transition_time == "t1");
  // Same status, new reason and generation: updated, the transition time stays.
  CHECK(ctrl::set_status_condition(conditions, ready("False", "StillWaiting", 2), "t2"));
  CHECK(conditions[0].last_transition_time == "t1");
  CHECK(conditions[0].reason == "StillWaiting");
  CHECK(conditions[0].observed_generation == 2);
  // The same again: no change, so nothing to write.
  CHECK_FALSE(ctrl::set_status_condition(conditions, ready("False", "StillWaiting", 2), "t3"));
  // The status flips: now.
  CHECK(ctrl::set_status_condition(conditions, ready("True", "Done", 2), "t4"));
  CHECK(conditions[0].last_transition_time == "t4");
  CHECK(ctrl::find_status_condition(conditions, "Ready") == &conditions[0]);
  CHECK(ctrl::find_status_condition(conditions, "Other") == nullptr);
}

TEST_CASE("ctrl condition: a previous condition without a transition time gets one",
          "[condition]") {
  std::vector<Condition> previous{ready("True", "Done")};
  CHECK(ctrl::transitioned(ready("True", "Done"), previous, "t9").last_transition_time == "t9");
}

TEST_CASE("ctrl condition: JSON both ways, malformed entries skipped", "[condition]") {
  rapidjson::Document d;
  d.Parse(R"([{"type":"Ready","status":"True","observedGeneration":3,)"
          R"("lastTransitionTime":"t","reason":"R","message":"M"},{"status":"True"},7])");
  auto conditions = ctrl::conditions_from_json(&d);
  REQUIRE(conditions.size() == 1);
  CHECK(conditions[0].observed_generation == 3);
  rapidjson::Document out;
  auto v = ctrl::condition_to_json(conditions[0], out.GetAllocator());
  CHECK(v == d[0]);
  CHECK(ctrl::conditions_from_json(nullptr).empty());
}

TEST_CASE("now_rfc3339: UTC, whole seconds, as the API server writes times", "[condition]") {
  const std::string now = asop::now_rfc3339();
  REQUIRE(now.size() == 20);
  CHECK(now[4] == '-');
  CHECK(now[10] == 'T');
  CHECK(now[19] == 'Z');
  CHECK(now.substr(0, 2) == "20");
}
