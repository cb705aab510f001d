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
  const rapidjson::Value* deployment = nullptr;  // the cached child, or null when absent
  const rapidjson::Value* service = nullptr;
  ReconcileIssue issue = ReconcileIssue::none;
  std::string issue_message;        // shown in the Degraded condition
  std::vector<Condition> previous;  // the AppService's current status.conditions
  std::string_view now;             // RFC 3339, used only when a condition flips
};

inline constexpr std::string_view kAvailable = "Available";
inline constexpr std::string_view kProgressing = "Progressing";
inline constexpr std::string_view kDegraded = "Degraded";

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

}  // namespace appservice
