// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace kube::testing {

// The checkout the tests were built from (fixtures, samples, deploy/ files live there).
const std::string& source_dir();

}  // namespace kube::testing
