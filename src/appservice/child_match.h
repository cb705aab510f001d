// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

namespace appservice {

// Does the live child already hold every field of the desired apply body? Only the fields we send
// are compared (the live object also carries server defaults, status and other managers' fields),
// quantities by value ("0.5" equals "500m"), list items by content wherever they are. A true
// result means the apply would change nothing, so the reconciler skips it: zero writes in steady
// state, while hand edits of replicas, image, ports or env are seen as drift.
bool deployment_matches(const rapidjson::Value& desired, const rapidjson::Value& actual);
bool service_matches(const rapidjson::Value& desired, const rapidjson::Value& actual);

}  // namespace appservice
