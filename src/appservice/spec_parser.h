// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "appservice/app_service.h"

namespace appservice {

// One thing wrong with a stored AppService, e.g. {"spec.ports[1].port", "must be in 1..65535"}.
struct FieldProblem {
  std::string path;
  std::string message;
};

// The result of parsing: metadata is always filled in (finalizer handling and deletion must work
// even for an invalid spec); the spec is only usable when there are no problems.
struct ParsedAppService {
  AppService app;
  std::vector<FieldProblem> problems;

  bool valid() const { return problems.empty(); }
  // "spec.image: must not be empty; spec.size: ..." for the InvalidSpec condition and Event,
  // bounded in length.
  std::string problems_message() const;
};

// Parses an AppService object as the API server returns it. The CRD schema refuses bad objects
// up front; this re-checks everything it relies on, because objects stored under an older CRD (or
// with the schema not installed) still reach the reconciler. Defaults are applied exactly as the
// CRD does: size 1, protocol TCP; serviceType derived when unset.
ParsedAppService parse_app_service(const rapidjson::Value& object);

// The JSON type a field is read as, in the CRD's terms.
enum class JsonType { string, integer, boolean, int_or_string };
std::string_view to_string(JsonType type);

// A field the parser reads: path in the schema ("spec.ports[].port"; "[]" is a list item, ".*" a
// map value) and its type. The CRD consistency test checks this list against crds/.
struct FieldUse {
  std::string_view path;
  JsonType type;
};
std::span<const FieldUse> parsed_fields();

}  // namespace appservice
