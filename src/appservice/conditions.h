// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>
#include <vector>

#include "appservice/app_service.h"

namespace appservice {

// Why the last reconcile could not make the children right, if it could not.
enum class ReconcileIssue { none, invalid_spec, ownership_conflict, reconcile_error };

struct StatusInputs {
  StatusInputs(const AppService& app, std::string_view now) : app(app), now(now) {}

  const AppService& app;
  // Our live child (from the cache, or the server's answer to our write), or null when there is
  // none of ours: never an object someone else controls, and never dropped because a write to it
  // was refused, so the counts and Available always describe what runs.
  const rapidjson::Value* deployment = nullptr;
  const rapidjson::Value* service = nullptr;
  // An object of the child's name exists but is not ours (the Degraded issue says whose).
  bool deployment_foreign = false;
  bool service_foreign = false;
  // A write to our Deployment failed (issue_reason says which): it runs, but not the spec.
  bool deployment_write_failed = false;
  ReconcileIssue issue = ReconcileIssue::none;
  std::string issue_reason;   // reconcile_error: which child and verb, "DeploymentApplyFailed"
  std::string issue_message;  // shown in the Degraded condition
  std::vector<Condition> previous;  // the AppService's current status.conditions
  std::string_view now;             // RFC 3339, used only when a condition flips
};

inline constexpr std::string_view kAvailable = "Available";
inline constexpr std::string_view kProgressing = "Progressing";
inline constexpr std::string_view kDegraded = "Degraded";
// Degraded's reason while the Deployment's ReplicaFailure condition is True (Pods refused).
inline constexpr std::string_view kReplicaFailure = "ReplicaFailure";

// The status the AppService should have. Pure: the same inputs give the same status, and a
// condition's lastTransitionTime stays the previous one unless its status flips, so writing the
// result again is a no-op (no hot loop of status updates).
AppServiceStatus compute_status(const StatusInputs& in);

// status.conditions of an AppService object; malformed entries are skipped.
std::vector<Condition> parse_conditions(const rapidjson::Value& app_service_object);

// The JSON of a status, for the /status subresource body.
rapidjson::Document status_to_json(const AppServiceStatus& status);

// Equal as statuses: object keys in any order, conditions in any order (keyed by type), and a
// missing count equal to 0. Use it to skip status writes that would change nothing.
bool status_equal(const rapidjson::Value& a, const rapidjson::Value& b);

// Where status `to` differs from `from` (status_equal said no), for the log line of the status
// write: the first field that differs, with both values unless it is a message,
// "conditions[Progressing].reason RollingOut -> RolloutComplete", "readyReplicas 0 -> 1".
std::string status_difference(const rapidjson::Value& from, const rapidjson::Value& to);

}  // namespace appservice
