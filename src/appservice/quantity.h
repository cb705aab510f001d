// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string_view>

namespace appservice {

// Kubernetes resource.Quantity, only as far as comparing values goes: the API server rewrites
// quantities in canonical form ("0.5" -> "500m", "1024Mi" -> "1Gi"), so comparing the strings we
// sent with the stored ones would see a difference forever and re-apply in a hot loop.

// The value of a quantity such as "500m", "1Gi", "1e3" or "2"; nullopt when malformed.
std::optional<long double> parse_quantity(std::string_view text);

// True when both parse and denote the same amount (to nano precision, the API server's finest).
bool quantities_equal(std::string_view a, std::string_view b);

}  // namespace appservice
