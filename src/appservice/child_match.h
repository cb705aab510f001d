// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <string>

namespace appservice {

// Does the live child already hold every field of the desired apply body? Only the fields we send
// are compared (the live object also carries server defaults, status and other managers' fields),
// quantities by value ("0.5" equals "500m"), list items by content wherever they are. A true
// result means the apply would change nothing, so the reconciler skips it: zero writes in steady
// state, while hand edits of replicas, image, ports or env are seen as drift.
bool deployment_matches(const rapidjson::Value& desired, const rapidjson::Value& actual);
bool service_matches(const rapidjson::Value& desired, const rapidjson::Value& actual);

// Where a child that does not match differs, for the log line of the write that follows: the path
// of the first desired field the live object lacks ("spec.template.spec.containers[0].image"),
// without values (an env var's value may be a secret). Empty when it matches. Slower than the
// *_matches functions: call it only once they said no.
std::string child_difference(const rapidjson::Value& desired, const rapidjson::Value& actual);

}  // namespace appservice
