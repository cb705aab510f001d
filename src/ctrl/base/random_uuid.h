// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "ctrl/base/clock.h"

namespace ctrl {

// A random (version 4) UUID in its 36-character text form, e.g. for reconcileIDs.
std::string random_uuid(Random& random);

}  // namespace ctrl
